// Command clientgo-bench is the reference side of `npm run bench:convergence -- --kubeconfig … --clientgo` (issue 34): a minimal client-go (v0.20, the
// staging copy vendored in kubernetes 1.20.2) controller that does, per BackupSchedule, the same work
// as the TypeScript controller, so that both can be timed on the same real kube-apiserver.
//
// Pattern: k8s.io/sample-controller (shared informers, a rate-limited workqueue, N workers, level-
// triggered sync), leader election off. Per schedule it
//
//   - reads the schedule from the informer cache (dynamic informer on kubelings.dev/v1 backupschedules,
//     unstructured: no generated clientset for the CRD exists here);
//   - reads the child from the CronJob cache (typed batch/v1 informer, label-selected on
//     app.kubernetes.io/managed-by=backupschedule-operator, as the TypeScript controller's);
//   - creates the child when missing (POST batch/v1 cronjobs, the same object buildCronJob makes for
//     the shapes listed below, without podFailurePolicy as the TypeScript controller does on < 1.26),
//     AlreadyExists → one GET, as the TypeScript controller does;
//   - restores drifted owned fields with an UPDATE (sample-controller's way; not reached by the bench);
//   - writes the status through /status (PUT of the cached object with the new status) only when it
//     differs: observedGeneration, cronJobName, active, recentRuns, Ready=True (Created/Updated/Ready,
//     observedGeneration) and LastBackupSucceeded=Unknown/NoRunFinished, exactly what the TypeScript
//     controller writes for a schedule whose child has never run;
//   - records one Normal "Created" Event per created child (client-go's record.EventBroadcaster).
//
// A third informer watches the backup Jobs (batch/v1 jobs, same label) as the TypeScript controller
// does; their runs are not turned into status (the bench starts no Job), a Job event only requeues its
// schedule.
//
// By default a sync that creates the child goes on to write the status from the create's answer (the
// sample-controller pattern: 2 writes, 1 sync). --status-after-watch instead ends the sync after the
// create and writes the status when the CronJob's watch event brings the key back, as the TypeScript
// controller does; comparing both says what that wait costs.
//
// The caches lag this controller's own writes. So that a sync running before the watch event of its
// own earlier write neither creates the child twice (409 AlreadyExists) nor writes the status again
// from a stale resourceVersion (409 Conflict), a per-key note remembers the child it created and the
// resourceVersion its status write returned, until the caches show them (client-go controllers call
// this "expectations"; the TypeScript controller's OwnStatusWrites and verified-child notes do the
// same). Without it, the same work would cost more than 2N writes.
//
// Spec shapes covered (everything bench/convergence-bench.ts and the e2e scenarios create): source
// etcd (endpoints, tlsSecretName) or persistentVolumeClaim; destination persistentVolumeClaim (claimName,
// path); retention keep{Last,Daily,Weekly,Monthly}; schedule, suspend, concurrencyPolicy,
// startingDeadlineSeconds, history limits, backoffLimit, activeDeadlineSeconds, image. A schedule using
// anything else (objectStore, encryption, resources, podSecurityContext, timeZone) is refused with an
// error naming the field and not retried: this is a comparison tool, not a second operator.
//
// Output: one JSON line when it starts, one when it stops (counters), error lines only on errors;
// nothing per object. The driver detects "all Ready" from outside (a watch on the schedules).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

// What the TypeScript controller writes (src/pure/labels.ts, backup-contract.ts, image.ts, names.ts).
const (
	group             = "kubelings.dev"
	scheduleVersion   = "v1"
	scheduleKind      = "BackupSchedule"
	operatorName      = "backupschedule-operator"
	labelName         = "app.kubernetes.io/name"
	labelInstance     = "app.kubernetes.io/instance"
	labelComponent    = "app.kubernetes.io/component"
	labelManagedBy    = "app.kubernetes.io/managed-by"
	labelPartOf       = "app.kubernetes.io/part-of"
	labelSchedule     = "kubelings.dev/backup-schedule"
	childSelector     = labelManagedBy + "=" + operatorName
	defaultImage      = "ghcr.io/kubelings/backupschedule-operator:0.3.0"
	containerName     = "backup"
	destinationMount  = "/backup/destination"
	sourceMount       = "/backup/source"
	etcdTLSMount      = "/etc/backup/etcd-tls"
	tmpMount          = "/tmp"
	backupUserID      = int64(65532)
	maxChildName      = 52
	maxLabelValue     = 63
	hashLength        = 10
	readyType         = "Ready"
	lastBackupType    = "LastBackupSucceeded"
	childNameIndex    = "child-name"
	noteMaxAge        = 5 * time.Second
	noteRecheckPeriod = time.Second
)

var scheduleGVR = schema.GroupVersionResource{Group: group, Version: scheduleVersion, Resource: "backupschedules"}

// retentionRules is RETENTION_RULES (src/api/schema-v1.ts) with the runner's flag of each, in order.
var retentionRules = []struct{ field, flag string }{
	{"keepLast", "--keep-last"}, {"keepDaily", "--keep-daily"}, {"keepWeekly", "--keep-weekly"}, {"keepMonthly", "--keep-monthly"},
}

// unsupportedSpecFields are the spec fields this comparison controller does not build (see the file doc).
var unsupportedSpecFields = []string{"timeZone", "resources", "podSecurityContext", "encryption"}

// permanentError marks a schedule this controller cannot handle: reported once, not retried.
type permanentError struct{ msg string }

func (e *permanentError) Error() string { return e.msg }

// note is what a key's own writes left that the caches may not show yet.
type note struct {
	child    *batchv1.CronJob // the child this controller created, until the CronJob cache has it
	statusRV string           // the resourceVersion its last status write returned, until the schedule cache shows it
	gen      int64            // the generation that write was for: a cached newer generation is not lag
	at       time.Time        // when statusRV was recorded: after noteMaxAge the cache is trusted again
}

type counters struct {
	syncs, creates, updates, statusWrites, gets, conflicts, alreadyExists, errors, lagSkips int64
}

type controller struct {
	ctx              context.Context
	batch            rest.Interface
	dynamic          dynamic.Interface
	schedules        cache.SharedIndexInformer
	cronJobs         cache.SharedIndexInformer
	jobs             cache.SharedIndexInformer // nil with --jobs-informer=false
	queue            workqueue.RateLimitingInterface
	recorder         record.EventRecorder // nil with --events=false
	image            string
	statusAfterWatch bool

	mu    sync.Mutex
	notes map[string]*note

	n counters
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	namespace := flag.String("namespace", "", "watch only this namespace (default: all)")
	workers := flag.Int("workers", 4, "concurrent syncs")
	qps := flag.Float64("qps", -1, "client-side rate limit; <0 = none (the TypeScript client has none)")
	burst := flag.Int("burst", 0, "client-side burst (with --qps > 0)")
	resync := flag.Duration("resync", 10*time.Hour, "informer resync period (0 = none)")
	protobuf := flag.Bool("protobuf", false, "typed clients (CronJobs, Jobs, Events) speak protobuf instead of JSON")
	events := flag.Bool("events", true, "record a Normal Created Event per created child, as the TypeScript controller does")
	jobsInformer := flag.Bool("jobs-informer", true, "also watch the backup Jobs, as the TypeScript controller does")
	statusAfterWatch := flag.Bool("status-after-watch", false, "write the status in the sync after the CronJob's watch event, not in the creating sync")
	image := flag.String("backup-image", defaultImage, "image of the backup container when the spec names none")
	logSynced := flag.Bool("log-synced", false, "also print a line when the caches have synced and the workers start")
	flag.Parse()
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "clientgo-bench: --kubeconfig is required")
		os.Exit(2)
	}
	if *workers < 1 {
		fmt.Fprintln(os.Stderr, "clientgo-bench: --workers must be at least 1")
		os.Exit(2)
	}

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "clientgo-bench: --kubeconfig %s: %v\n", *kubeconfig, err)
		os.Exit(2)
	}
	cfg.QPS = float32(*qps)
	cfg.Burst = *burst
	rest.AddUserAgent(cfg, "clientgo-bench")
	typedCfg := rest.CopyConfig(cfg)
	if *protobuf {
		typedCfg.ContentType = "application/vnd.kubernetes.protobuf"
		typedCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	kube := kubernetes.NewForConfigOrDie(typedCfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := ctx.Done()

	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, *resync, *namespace, nil)
	schedules := dynFactory.ForResource(scheduleGVR).Informer()
	utilruntime.Must(schedules.AddIndexers(cache.Indexers{childNameIndex: scheduleChildNameIndex}))

	cronJobs := cache.NewSharedIndexInformer(
		cache.NewFilteredListWatchFromClient(kube.BatchV1().RESTClient(), "cronjobs", *namespace, func(o *metav1.ListOptions) { o.LabelSelector = childSelector }),
		&batchv1.CronJob{},
		0, // no resync of its own: the schedules' resync looks at every child
		cache.Indexers{},
	)

	c := &controller{
		ctx:              ctx,
		batch:            kube.BatchV1().RESTClient(),
		dynamic:          dyn,
		schedules:        schedules,
		cronJobs:         cronJobs,
		queue:            workqueue.NewNamedRateLimitingQueue(workqueue.DefaultControllerRateLimiter(), "backupschedule"),
		image:            *image,
		statusAfterWatch: *statusAfterWatch,
		notes:            map[string]*note{},
	}

	var typedFactory informers.SharedInformerFactory
	if *jobsInformer {
		typedFactory = informers.NewSharedInformerFactoryWithOptions(kube, 0,
			informers.WithNamespace(*namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = childSelector }))
		c.jobs = typedFactory.Batch().V1().Jobs().Informer()
	}
	if *events {
		broadcaster := record.NewBroadcaster()
		broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
		defer broadcaster.Shutdown()
		c.recorder = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "clientgo-bench"})
	}
	c.addEventHandlers()

	printLine(map[string]interface{}{
		"msg": "starting", "pid": os.Getpid(), "workers": *workers, "namespace": *namespace, "qps": *qps,
		"protobuf": *protobuf, "events": *events, "jobsInformer": *jobsInformer, "statusAfterWatch": *statusAfterWatch,
		"http2": os.Getenv("DISABLE_HTTP2") == "", "host": cfg.Host,
	})

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		cancel()
		<-signals
		os.Exit(1)
	}()

	dynFactory.Start(stop)
	go cronJobs.Run(stop)
	synced := []cache.InformerSynced{schedules.HasSynced, cronJobs.HasSynced}
	if typedFactory != nil {
		typedFactory.Start(stop)
		synced = append(synced, c.jobs.HasSynced)
	}
	if !cache.WaitForCacheSync(stop, synced...) {
		fmt.Fprintln(os.Stderr, "clientgo-bench: stopped before the caches synced")
		os.Exit(1)
	}
	if *logSynced {
		printLine(map[string]interface{}{"msg": "starting workers", "schedules": len(schedules.GetIndexer().ListKeys()), "cronJobs": len(cronJobs.GetIndexer().ListKeys())})
	}
	var running sync.WaitGroup
	for i := 0; i < *workers; i++ {
		running.Add(1)
		go func() {
			defer running.Done()
			wait.Until(c.runWorker, time.Second, stop)
		}()
	}
	<-stop
	c.queue.ShutDown()
	running.Wait()
	printLine(map[string]interface{}{
		"msg": "stopped", "syncs": atomic.LoadInt64(&c.n.syncs), "creates": atomic.LoadInt64(&c.n.creates),
		"updates": atomic.LoadInt64(&c.n.updates), "statusWrites": atomic.LoadInt64(&c.n.statusWrites),
		"gets": atomic.LoadInt64(&c.n.gets), "conflicts": atomic.LoadInt64(&c.n.conflicts),
		"alreadyExists": atomic.LoadInt64(&c.n.alreadyExists), "errors": atomic.LoadInt64(&c.n.errors),
		"lagSkips": atomic.LoadInt64(&c.n.lagSkips),
	})
}

func printLine(fields map[string]interface{}) {
	fields["time"] = time.Now().UTC().Format(time.RFC3339Nano)
	line, err := json.Marshal(fields)
	if err != nil {
		line = []byte(fmt.Sprintf(`{"msg":"unprintable line: %v"}`, err))
	}
	fmt.Fprintln(os.Stdout, string(line))
}

// scheduleChildNameIndex indexes a schedule by `namespace/<child CronJob name>`, for the Job handler.
func scheduleChildNameIndex(obj interface{}) ([]string, error) {
	s, ok := obj.(*unstructured.Unstructured)
	if !ok || s.GetName() == "" {
		return nil, nil
	}
	return []string{s.GetNamespace() + "/" + childNameFor(s.GetName())}, nil
}

func (c *controller) addEventHandlers() {
	c.schedules.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	})
	c.cronJobs.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueOwner,
		UpdateFunc: func(old, obj interface{}) {
			o, n := old.(*batchv1.CronJob), obj.(*batchv1.CronJob)
			if o.ResourceVersion == n.ResourceVersion {
				return // a resync: the schedules' own resync covers it
			}
			c.enqueueOwner(old)
			c.enqueueOwner(obj)
		},
		DeleteFunc: c.enqueueOwner,
	})
	if c.jobs != nil {
		c.jobs.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    c.enqueueForJob,
			UpdateFunc: func(_, obj interface{}) { c.enqueueForJob(obj) },
			DeleteFunc: c.enqueueForJob,
		})
	}
}

func (c *controller) enqueue(obj interface{}) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// unwrap returns the object of a delete notification whose final state was missed.
func unwrap(obj interface{}) interface{} {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return obj
}

// enqueueOwner queues the BackupSchedule controlling a CronJob.
func (c *controller) enqueueOwner(obj interface{}) {
	cronJob, ok := unwrap(obj).(*batchv1.CronJob)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(cronJob)
	if ref == nil || ref.Kind != scheduleKind || !strings.HasPrefix(ref.APIVersion, group+"/") {
		return
	}
	c.queue.Add(cronJob.Namespace + "/" + ref.Name)
}

// enqueueForJob queues the schedule whose child CronJob controls a Job.
func (c *controller) enqueueForJob(obj interface{}) {
	job, ok := unwrap(obj).(*batchv1.Job)
	if !ok {
		return
	}
	ref := metav1.GetControllerOfNoCopy(job)
	if ref == nil || ref.Kind != "CronJob" {
		return
	}
	owners, err := c.schedules.GetIndexer().ByIndex(childNameIndex, job.Namespace+"/"+ref.Name)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, s := range owners {
		c.enqueue(s)
	}
}

func (c *controller) runWorker() {
	for c.processNextWorkItem() {
	}
}

func (c *controller) processNextWorkItem() bool {
	item, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(item)
	key := item.(string)
	atomic.AddInt64(&c.n.syncs, 1)
	err := c.sync(key)
	if err == nil {
		c.queue.Forget(item)
		return true
	}
	atomic.AddInt64(&c.n.errors, 1)
	if _, permanent := err.(*permanentError); permanent {
		c.queue.Forget(item)
	} else {
		c.queue.AddRateLimited(item)
	}
	utilruntime.HandleError(fmt.Errorf("backupschedule %s: %v", key, err))
	return true
}

// noteFor returns a copy of key's note (zero when none).
func (c *controller) noteFor(key string) note {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.notes[key]; n != nil {
		return *n
	}
	return note{}
}

// updateNote changes key's note and drops it once empty.
func (c *controller) updateNote(key string, change func(n *note)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notes[key]
	if n == nil {
		n = &note{}
	}
	change(n)
	if n.child == nil && n.statusRV == "" {
		delete(c.notes, key)
	} else {
		c.notes[key] = n
	}
}

func (c *controller) sync(key string) error {
	obj, exists, err := c.schedules.GetIndexer().GetByKey(key)
	if err != nil {
		return err
	}
	if !exists {
		c.updateNote(key, func(n *note) { *n = note{} })
		return nil // the garbage collector deletes the child through its ownerReference
	}
	schedule := obj.(*unstructured.Unstructured)
	if schedule.GetDeletionTimestamp() != nil {
		return nil
	}

	// This controller's last status write not in the cache yet: the schedule there is older than the
	// one stored, and a status written from it would be a 409. Its watch event brings the key back.
	known := c.noteFor(key)
	if known.statusRV != "" {
		if schedule.GetResourceVersion() != known.statusRV && schedule.GetGeneration() == known.gen && time.Since(known.at) < noteMaxAge {
			atomic.AddInt64(&c.n.lagSkips, 1)
			c.queue.AddAfter(key, noteRecheckPeriod) // in case the event came before the note
			return nil
		}
		c.updateNote(key, func(n *note) { n.statusRV = "" })
	}

	desired, err := buildCronJob(schedule, c.image)
	if err != nil {
		return err
	}
	childKey := desired.Namespace + "/" + desired.Name
	var child *batchv1.CronJob
	if cached, found, err := c.cronJobs.GetIndexer().GetByKey(childKey); err != nil {
		return err
	} else if found {
		child = cached.(*batchv1.CronJob)
		if known.child != nil {
			c.updateNote(key, func(n *note) { n.child = nil })
		}
	} else if known.child != nil && known.child.Name == desired.Name && known.child.Namespace == desired.Namespace {
		child = known.child // created by this controller; its watch event is on the way
	}

	if child == nil {
		created, err := c.createCronJob(desired)
		if apierrors.IsAlreadyExists(err) {
			// The cache is behind, or the CronJob is outside the label-selected watch: look at it once.
			atomic.AddInt64(&c.n.alreadyExists, 1)
			child, err = c.getCronJob(desired.Namespace, desired.Name)
			if apierrors.IsNotFound(err) {
				return fmt.Errorf("CronJob %s was deleted after AlreadyExists; trying again", childKey)
			}
			if err != nil {
				return err
			}
		} else if err != nil {
			return err
		} else {
			atomic.AddInt64(&c.n.creates, 1)
			child = created
			c.updateNote(key, func(n *note) { n.child = created })
			// The watch event may have come before the note: then nothing would clear it.
			if _, found, _ := c.cronJobs.GetIndexer().GetByKey(childKey); found {
				c.updateNote(key, func(n *note) { n.child = nil })
			}
			if c.recorder != nil {
				c.recorder.Eventf(schedule, corev1.EventTypeNormal, "Created", "Created CronJob %q", desired.Name)
			}
			if c.statusAfterWatch {
				return nil // the CronJob's ADDED event brings the key back for the status
			}
		}
	}

	ref := metav1.GetControllerOfNoCopy(child)
	if ref == nil || ref.UID != schedule.GetUID() {
		return fmt.Errorf("CronJob %s exists and is not controlled by this BackupSchedule (uid %s); left alone", childKey, schedule.GetUID())
	}
	if healed := healedCopy(child, desired); healed != nil {
		updated, err := c.updateCronJob(healed)
		if apierrors.IsConflict(err) {
			atomic.AddInt64(&c.n.conflicts, 1)
		}
		if err != nil {
			return err
		}
		atomic.AddInt64(&c.n.updates, 1)
		child = updated
	}
	return c.writeStatus(key, schedule, child)
}

// writeStatus PUTs the schedule's status through /status when it differs from the cached one.
func (c *controller) writeStatus(key string, schedule *unstructured.Unstructured, child *batchv1.CronJob) error {
	// Read in place (NestedMap would deep-copy it on every sync): only compared, never changed.
	previous, _ := schedule.Object["status"].(map[string]interface{})
	status := computeStatus(schedule, previous, child, time.Now())
	if apiequality.Semantic.DeepEqual(previous, status) {
		return nil
	}
	updated := schedule.DeepCopy()
	updated.Object["status"] = status
	stored, err := c.dynamic.Resource(scheduleGVR).Namespace(schedule.GetNamespace()).UpdateStatus(c.ctx, updated, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsConflict(err) {
			atomic.AddInt64(&c.n.conflicts, 1)
		}
		return err
	}
	atomic.AddInt64(&c.n.statusWrites, 1)
	rv := stored.GetResourceVersion()
	c.updateNote(key, func(n *note) { n.statusRV, n.gen, n.at = rv, schedule.GetGeneration(), time.Now() })
	// The watch event may have come before the note: then the cache shows it already.
	if cached, found, _ := c.schedules.GetIndexer().GetByKey(key); found && cached.(*unstructured.Unstructured).GetResourceVersion() == rv {
		c.updateNote(key, func(n *note) { n.statusRV = "" })
	}
	return nil
}

func (c *controller) createCronJob(cronJob *batchv1.CronJob) (*batchv1.CronJob, error) {
	out := &batchv1.CronJob{}
	err := c.batch.Post().Namespace(cronJob.Namespace).Resource("cronjobs").Body(cronJob).Do(c.ctx).Into(out)
	return out, err
}

func (c *controller) getCronJob(namespace, name string) (*batchv1.CronJob, error) {
	atomic.AddInt64(&c.n.gets, 1)
	out := &batchv1.CronJob{}
	err := c.batch.Get().Namespace(namespace).Resource("cronjobs").Name(name).Do(c.ctx).Into(out)
	return out, err
}

func (c *controller) updateCronJob(cronJob *batchv1.CronJob) (*batchv1.CronJob, error) {
	out := &batchv1.CronJob{}
	err := c.batch.Put().Namespace(cronJob.Namespace).Resource("cronjobs").Name(cronJob.Name).Body(cronJob).Do(c.ctx).Into(out)
	return out, err
}

// healedCopy returns a copy of child with the owned fields that drifted from desired restored, or nil
// when none did. Server-defaulted fields (imagePullPolicy, dnsPolicy, …) are not compared.
func healedCopy(child, desired *batchv1.CronJob) *batchv1.CronJob {
	owned := func(cj *batchv1.CronJob) []interface{} {
		s := cj.Spec
		var containers []corev1.Container
		if len(s.JobTemplate.Spec.Template.Spec.Containers) > 0 {
			c := s.JobTemplate.Spec.Template.Spec.Containers[0]
			containers = []corev1.Container{{Name: c.Name, Image: c.Image, Args: c.Args, Env: c.Env, VolumeMounts: c.VolumeMounts, Resources: c.Resources, SecurityContext: c.SecurityContext}}
		}
		return []interface{}{
			cj.Labels, s.Schedule, s.Suspend, s.ConcurrencyPolicy, s.StartingDeadlineSeconds, s.SuccessfulJobsHistoryLimit,
			s.FailedJobsHistoryLimit, s.JobTemplate.Labels, s.JobTemplate.Spec.BackoffLimit, s.JobTemplate.Spec.ActiveDeadlineSeconds,
			s.JobTemplate.Spec.Template.Labels, s.JobTemplate.Spec.Template.Spec.RestartPolicy, containers,
		}
	}
	if apiequality.Semantic.DeepEqual(owned(child), owned(desired)) {
		return nil
	}
	healed := child.DeepCopy()
	if healed.Labels == nil {
		healed.Labels = map[string]string{}
	}
	for k, v := range desired.Labels {
		healed.Labels[k] = v
	}
	d := desired.Spec
	healed.Spec.Schedule, healed.Spec.Suspend, healed.Spec.ConcurrencyPolicy = d.Schedule, d.Suspend, d.ConcurrencyPolicy
	healed.Spec.StartingDeadlineSeconds = d.StartingDeadlineSeconds
	healed.Spec.SuccessfulJobsHistoryLimit, healed.Spec.FailedJobsHistoryLimit = d.SuccessfulJobsHistoryLimit, d.FailedJobsHistoryLimit
	// The template is replaced whole: the API server defaults it again.
	healed.Spec.JobTemplate = *d.JobTemplate.DeepCopy()
	return healed
}

// computeStatus is src/pure/status.ts's computeStatus for an InSync child whose Jobs never ran:
// lastTransitionTime changes only with a condition's status; other writers' conditions are kept.
func computeStatus(schedule *unstructured.Unstructured, previous map[string]interface{}, child *batchv1.CronJob, now time.Time) map[string]interface{} {
	generation := schedule.GetGeneration()
	stamp := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	var conditions []interface{}
	byType := map[string]map[string]interface{}{}
	if list, ok := previous["conditions"].([]interface{}); ok {
		conditions = list
		for _, item := range list {
			if cond, ok := item.(map[string]interface{}); ok {
				if t, ok := cond["type"].(string); ok {
					byType[t] = cond
				}
			}
		}
	}
	transition := func(condType, status string) string {
		if before := byType[condType]; before != nil && before["status"] == status {
			if t, ok := before["lastTransitionTime"].(string); ok {
				return t
			}
		}
		return stamp
	}

	reason, message := "Ready", fmt.Sprintf("CronJob %q matches the spec", child.Name)
	before := byType[readyType]
	_, hadChild := previous["cronJobName"]
	switch {
	case before != nil && before["status"] == "True" && before["observedGeneration"] == generation:
		reason, _ = before["reason"].(string)
		message, _ = before["message"].(string)
	case !hadChild:
		reason, message = "Created", fmt.Sprintf("CronJob %q created", child.Name)
	case before == nil || before["observedGeneration"] != generation:
		reason, message = "Updated", fmt.Sprintf("CronJob %q matches generation %d", child.Name, generation)
	}
	ready := map[string]interface{}{
		"type": readyType, "status": "True", "reason": reason, "message": message,
		"observedGeneration": generation, "lastTransitionTime": transition(readyType, "True"),
	}
	// backupOutcome (src/pure/backup-runs.ts) with no finished Job: rebuilt each time, like Ready.
	lastBackup := map[string]interface{}{
		"type": lastBackupType, "status": "Unknown", "reason": "NoRunFinished", "message": "no backup Job of this schedule has finished yet",
		"observedGeneration": generation, "lastTransitionTime": transition(lastBackupType, "Unknown"),
	}
	next := []interface{}{ready, lastBackup}
	for _, item := range conditions {
		if cond, ok := item.(map[string]interface{}); ok && cond["type"] != readyType && cond["type"] != lastBackupType {
			next = append(next, cond)
		}
	}

	active := []interface{}{}
	for _, ref := range child.Status.Active {
		active = append(active, ref.Name)
	}
	recentRuns, ok := previous["recentRuns"].([]interface{})
	if !ok {
		recentRuns = []interface{}{}
	}
	status := map[string]interface{}{
		"observedGeneration": generation,
		"cronJobName":        child.Name,
		"active":             active,
		"recentRuns":         recentRuns,
		"conditions":         next,
	}
	if child.Status.LastScheduleTime != nil {
		status["lastScheduleTime"] = child.Status.LastScheduleTime.UTC().Format(time.RFC3339)
	}
	for _, kept := range []string{"lastSuccessfulTime", "lastFailedTime", "lastMissedTime"} {
		if v, ok := previous[kept]; ok {
			status[kept] = v
		}
	}
	return status
}

// hashSuffix is the first 10 hex characters of sha256(value) (src/pure/names.ts).
func hashSuffix(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])[:hashLength]
}

// childNameFor is src/pure/names.ts childNameFor: ≤ 52 characters, no dots.
func childNameFor(name string) string {
	if len(name) <= maxChildName && !strings.Contains(name, ".") {
		return name
	}
	prefix := strings.ReplaceAll(name, ".", "-")
	if len(prefix) > maxChildName-hashLength-1 {
		prefix = prefix[:maxChildName-hashLength-1]
	}
	return strings.TrimRight(prefix, "-") + "-" + hashSuffix(name)
}

// labelValueFor is src/pure/names.ts labelValueFor: ≤ 63 characters.
func labelValueFor(name string) string {
	if len(name) <= maxLabelValue {
		return name
	}
	prefix := strings.TrimRight(name[:maxLabelValue-hashLength-1], "-._")
	return prefix + "-" + hashSuffix(name)
}

func childLabels(scheduleName string) map[string]string {
	owner := labelValueFor(scheduleName)
	return map[string]string{
		labelName: "backup", labelInstance: owner, labelComponent: "backup-job",
		labelManagedBy: operatorName, labelPartOf: operatorName, labelSchedule: owner,
	}
}

func int32Field(spec map[string]interface{}, field string) (*int32, error) {
	v, found, err := unstructured.NestedInt64(spec, field)
	if err != nil {
		return nil, fmt.Errorf("spec.%s: %v", field, err)
	}
	if !found {
		return nil, nil
	}
	out := int32(v)
	return &out, nil
}

func int64Field(spec map[string]interface{}, field string) (*int64, error) {
	v, found, err := unstructured.NestedInt64(spec, field)
	if err != nil {
		return nil, fmt.Errorf("spec.%s: %v", field, err)
	}
	if !found {
		return nil, nil
	}
	return &v, nil
}

// buildCronJob is src/pure/cron-job.ts buildCronJob for the covered shapes (file doc), with the
// defaults the CRD's schema applies on admission, without podFailurePolicy (as on Kubernetes < 1.26).
func buildCronJob(schedule *unstructured.Unstructured, defaultImg string) (*batchv1.CronJob, error) {
	name, namespace := schedule.GetName(), schedule.GetNamespace()
	spec, ok := schedule.Object["spec"].(map[string]interface{})
	if !ok {
		return nil, &permanentError{"spec: required"}
	}
	for _, field := range unsupportedSpecFields {
		if _, set := spec[field]; set {
			return nil, &permanentError{fmt.Sprintf("spec.%s: not built by this comparison controller", field)}
		}
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(spec, "destination", "objectStore"); set {
		return nil, &permanentError{"spec.destination.objectStore: not built by this comparison controller"}
	}
	cron, _, _ := unstructured.NestedString(spec, "schedule")
	if cron == "" {
		return nil, &permanentError{"spec.schedule: required"}
	}

	args := []string{"backup"}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	claim, hasClaim, _ := unstructured.NestedString(spec, "destination", "persistentVolumeClaim", "claimName")
	if !hasClaim || claim == "" {
		return nil, &permanentError{"spec.destination.persistentVolumeClaim.claimName: required"}
	}
	volumes = append(volumes, corev1.Volume{Name: "destination", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	mounts = append(mounts, corev1.VolumeMount{Name: "destination", MountPath: destinationMount})

	endpoints, hasEtcd, _ := unstructured.NestedStringSlice(spec, "source", "etcd", "endpoints")
	tlsSecret, hasTLS, _ := unstructured.NestedString(spec, "source", "etcd", "tlsSecretName")
	sourceClaim, hasSourceClaim, _ := unstructured.NestedString(spec, "source", "persistentVolumeClaim", "claimName")
	switch {
	case hasEtcd:
		args = append(args, "--source=etcd", "--etcd-endpoints="+strings.Join(endpoints, ","))
		if hasTLS {
			args = append(args, "--etcd-tls-dir="+etcdTLSMount)
		}
	case hasSourceClaim:
		args = append(args, "--source=pvc", "--source-dir="+sourceMount)
		volumes = append(volumes, corev1.Volume{Name: "source", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: sourceClaim, ReadOnly: true}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "source", MountPath: sourceMount, ReadOnly: true})
	default:
		return nil, &permanentError{"spec.source: etcd or persistentVolumeClaim is required"}
	}
	if hasEtcd && hasTLS {
		mode := int32(0o440)
		volumes = append(volumes, corev1.Volume{Name: "etcd-tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: tlsSecret, DefaultMode: &mode}}})
		mounts = append(mounts, corev1.VolumeMount{Name: "etcd-tls", MountPath: etcdTLSMount, ReadOnly: true})
	}
	volumes = append(volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	mounts = append(mounts, corev1.VolumeMount{Name: "tmp", MountPath: tmpMount})

	// args in backupArgs' order: source, destination, (age recipients: not covered), retention.
	if path, set, _ := unstructured.NestedString(spec, "destination", "persistentVolumeClaim", "path"); set {
		args = append(args, "--destination-dir="+destinationMount+"/"+path)
	} else {
		args = append(args, "--destination-dir="+destinationMount)
	}
	retention, _ := spec["retention"].(map[string]interface{})
	kept := 0
	for _, rule := range retentionRules {
		if v, set, _ := unstructured.NestedInt64(retention, rule.field); set {
			args = append(args, fmt.Sprintf("%s=%d", rule.flag, v))
			kept++
		}
	}
	if kept == 0 {
		args = append(args, "--keep-last=7")
	}

	suspend, _, _ := unstructured.NestedBool(spec, "suspend") // default false
	policy, _, _ := unstructured.NestedString(spec, "concurrencyPolicy")
	if policy == "" {
		policy = "Forbid"
	}
	startingDeadline, err := int64Field(spec, "startingDeadlineSeconds")
	if err != nil {
		return nil, &permanentError{err.Error()}
	}
	successful, err := int32Field(spec, "successfulJobsHistoryLimit")
	if err != nil {
		return nil, &permanentError{err.Error()}
	}
	if successful == nil {
		successful = int32Ptr(3)
	}
	failed, err := int32Field(spec, "failedJobsHistoryLimit")
	if err != nil {
		return nil, &permanentError{err.Error()}
	}
	if failed == nil {
		failed = int32Ptr(1)
	}
	backoff, err := int32Field(spec, "backoffLimit")
	if err != nil {
		return nil, &permanentError{err.Error()}
	}
	if backoff == nil {
		backoff = int32Ptr(3)
	}
	activeDeadline, err := int64Field(spec, "activeDeadlineSeconds")
	if err != nil {
		return nil, &permanentError{err.Error()}
	}
	image, _, _ := unstructured.NestedString(spec, "image")
	if image == "" {
		image = defaultImg
	}

	childName := childNameFor(name)
	labels := childLabels(name)
	copyLabels := func() map[string]string {
		out := make(map[string]string, len(labels))
		for k, v := range labels {
			out[k] = v
		}
		return out
	}
	yes, no := true, false
	user := backupUserID
	return &batchv1.CronJob{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
		ObjectMeta: metav1.ObjectMeta{
			Name: childName, Namespace: namespace, Labels: copyLabels(),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: schedule.GetAPIVersion(), Kind: scheduleKind, Name: name, UID: schedule.GetUID(),
				Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: batchv1.CronJobSpec{
			Schedule:                   cron,
			Suspend:                    &suspend,
			ConcurrencyPolicy:          batchv1.ConcurrencyPolicy(policy),
			StartingDeadlineSeconds:    startingDeadline,
			SuccessfulJobsHistoryLimit: successful,
			FailedJobsHistoryLimit:     failed,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyLabels()},
				Spec: batchv1.JobSpec{
					BackoffLimit:          backoff,
					ActiveDeadlineSeconds: activeDeadline,
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: copyLabels()},
						Spec: corev1.PodSpec{
							RestartPolicy:                corev1.RestartPolicyNever,
							AutomountServiceAccountToken: &no,
							SecurityContext: &corev1.PodSecurityContext{
								RunAsNonRoot:   &yes,
								RunAsUser:      &user,
								RunAsGroup:     &user,
								FSGroup:        &user,
								SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
							},
							Containers: []corev1.Container{{
								Name:  containerName,
								Image: image,
								Args:  args,
								Env: []corev1.EnvVar{
									{Name: "BACKUP_SCHEDULE_NAMESPACE", Value: namespace},
									{Name: "BACKUP_SCHEDULE_NAME", Value: name},
									{Name: "TMPDIR", Value: tmpMount},
								},
								Resources: corev1.ResourceRequirements{
									Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
									Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
								},
								SecurityContext: &corev1.SecurityContext{
									AllowPrivilegeEscalation: &no,
									ReadOnlyRootFilesystem:   &yes,
									RunAsNonRoot:             &yes,
									Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
								},
								VolumeMounts: mounts,
							}},
							Volumes: volumes,
						},
					},
				},
			},
		},
	}, nil
}

func int32Ptr(v int32) *int32 { return &v }
