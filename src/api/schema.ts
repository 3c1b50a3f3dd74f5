/**
 * The single source of truth for the BackupSchedule API (`kubelings.dev/v1alpha1`): one JSON Schema of
 * the whole object (spec and status). Three things are derived from it:
 * - `imports/backupschedule.ts` (TypeScript types, `npm run import`, json-schema-to-typescript);
 * - the CRD's `openAPIV3Schema` (`toCrdOpenApiSchema`, which strips the TypeScript-only keywords);
 * - `validateBackupSchedule` (ajv on this schema, plus the CEL rules re-implemented).
 *
 * Rules for editing: every property has a `description` (it is what `kubectl explain` prints), every
 * node a `type` (the CRD must be a structural schema), no `additionalProperties: false` (the API server
 * prunes unknown fields; the validator adds it itself), and `x-kubernetes-validations` rules must be
 * mirrored in `cel-rules.ts`.
 */

import { GO_SPACE_CLASS } from './cron-schedule.ts';

/** A JSON Schema node as written here (JSON Schema draft 7 + the `x-kubernetes-*` extensions). */
export type SchemaNode = { readonly [keyword: string]: unknown };

/** DNS-1123 subdomain: Kubernetes object names (PVCs, Secrets). */
export const DNS1123_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/**
 * What the CronJob API's parser (robfig/cron) can accept, loosely: a descriptor, `@every <duration>`, or
 * five fields separated by Go whitespace (`strings.Fields`; after `*-` a field may hold anything, so
 * fields are any non-blank text). A superset: bounds, names and steps are the validator's job (a regex
 * cannot follow robfig's rules), but the field count, "every day" and Quartz' six fields fail here.
 */
export const SCHEDULE_PATTERN =
  '^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|@every [-+]?[0-9.][0-9.a-z\u00b5\u03bc]*|' +
  `[${GO_SPACE_CLASS}]*[^${GO_SPACE_CLASS}]+([${GO_SPACE_CLASS}]+[^${GO_SPACE_CLASS}]+){4}[${GO_SPACE_CLASS}]*)$`;

/**
 * One `/`-separated part of a time zone name as the CronJob API allows it (kube validateTimeZone:
 * 1-14 of `[A-Za-z0-9._+-]`, not starting with `-`); whether the name exists is the validator's check.
 */
const TIME_ZONE_PART = '[A-Za-z0-9._+][A-Za-z0-9._+-]{0,13}';

/** A time zone name as the CronJob API's character rule allows it (see TIME_ZONE_PART). */
export const TIME_ZONE_PATTERN = `^${TIME_ZONE_PART}(/${TIME_ZONE_PART})*$`;

/** An etcd client URL: http(s), one DNS name, IPv4 or [IPv6] host, an optional port; nothing else (no commas). */
export const ENDPOINT_PATTERN =
  '^https?://([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?/?$';

/**
 * A non-negative Kubernetes resource quantity (`resource.Quantity`), string form: Kubernetes' own
 * quantity pattern without the minus sign (kube rejects negative requests and limits) and with an
 * integer exponent (kube's parser rejects `1e1.5`). Whether the exponent fits an int32 and requests are
 * within limits is the validator's check. Zero spelt without a digit ("+", ".", "Ki") and "-0", which
 * kube's parser reads as 0, are refused here as the typos they are.
 */
export const QUANTITY_PATTERN =
  '^\\+?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?[0-9]+))?$';

/**
 * The longest quantity string accepted. Kubernetes' own quantities are short ("500m", "1.5Gi"; a
 * canonical one is at most ~20 characters), but the pattern alone lets a tenant store megabytes of
 * digits that every reader (controller cache, validator, CEL) then carries.
 */
export const MAX_QUANTITY_LENGTH = 64;

/**
 * The most Job names `status.active` lists: the CronJob can have more running (concurrencyPolicy
 * Allow), and the status builder (src/pure/status.ts) keeps the first ones by name, so its write stays valid.
 */
export const MAX_ACTIVE_JOBS = 32;

/** The most conditions `status.conditions` holds: Ready plus conditions other writers set (the status builder keeps the first of those). */
export const MAX_CONDITIONS = 16;

/** The longest Job name (a DNS-1123 subdomain); the CronJob controller's are at most 52 + 11 characters. */
export const MAX_JOB_NAME_LENGTH = 253;

const quantity = (what: string, example: string): SchemaNode => ({
  type: 'string',
  maxLength: MAX_QUANTITY_LENGTH,
  pattern: QUANTITY_PATTERN,
  description: `${what} as a Kubernetes quantity, e.g. "${example}".`,
});

const resourceList: SchemaNode = {
  type: 'object',
  title: 'ResourceList',
  description: 'Resource quantities of the backup container by resource name (requests: minimum, limits: maximum).',
  properties: {
    cpu: quantity('CPU', '500m'),
    memory: quantity('Memory', '256Mi'),
    'ephemeral-storage': quantity('Local ephemeral storage', '1Gi'),
  },
};

const claimName: SchemaNode = {
  type: 'string',
  minLength: 1,
  maxLength: 253,
  pattern: DNS1123_SUBDOMAIN,
  description: 'Name of a PersistentVolumeClaim in the BackupSchedule\'s namespace.',
};

const condition: SchemaNode = {
  type: 'object',
  title: 'Condition',
  description: 'One aspect of the current state (Kubernetes API conventions, metav1.Condition).',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'],
  properties: {
    type: { type: 'string', maxLength: 316, description: 'Type of the condition in CamelCase, e.g. Ready.' },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'], description: 'Status of the condition.' },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 1024,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description: 'Programmatic identifier of the reason for the last transition, in CamelCase.',
    },
    message: { type: 'string', maxLength: 32768, description: 'Human-readable details of the last transition.' },
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'metadata.generation of the BackupSchedule the condition was set from.',
    },
    lastTransitionTime: {
      type: 'string',
      format: 'date-time',
      description: 'When the condition last changed from one status to another.',
    },
  },
};

const backupRun: SchemaNode = {
  type: 'object',
  title: 'BackupRun',
  description: 'A finished backup Job of the schedule, from the Job\'s status (its Complete or Failed condition).',
  required: ['job', 'completionTime', 'result'],
  properties: {
    job: { type: 'string', maxLength: 63, description: 'Name of the Job.' },
    startTime: { type: 'string', format: 'date-time', description: 'When the Job started.' },
    completionTime: { type: 'string', format: 'date-time', description: 'When the Job completed or failed.' },
    result: { type: 'string', enum: ['Succeeded', 'Failed'], description: 'How the Job ended.' },
    reason: { type: 'string', maxLength: 128, description: 'Why the Job failed: BackoffLimitExceeded, DeadlineExceeded, PodFailurePolicy…' },
    exitCode: { type: 'integer', minimum: 0, maximum: 255, description: 'Exit code of the backup container that failed the Job (PodFailurePolicy): 3 incomplete volume archive, 4 pruning failed.' },
    message: { type: 'string', maxLength: 256, description: 'The Job controller\'s failure message, shortened.' },
  },
};

/** The BackupSchedule JSON Schema (object root: apiVersion, kind, metadata, spec, status). */
export const backupScheduleSchema: SchemaNode = {
  type: 'object',
  title: 'BackupSchedule',
  description:
    'BackupSchedule backs up etcd or a PersistentVolumeClaim on a cron schedule into a PersistentVolumeClaim, ' +
    'keeping the last N backups. The operator reconciles each BackupSchedule into a CronJob of the same namespace.',
  required: ['spec'],
  properties: {
    apiVersion: {
      type: 'string',
      description: 'APIVersion defines the versioned schema of this representation of an object.',
    },
    kind: { type: 'string', description: 'Kind is a string value representing the REST resource this object represents.' },
    metadata: { type: 'object', tsType: 'ObjectMeta', description: 'Standard object metadata.' },
    spec: {
      type: 'object',
      title: 'BackupScheduleSpec',
      description: 'What to back up, when, where to, and how many backups to keep.',
      required: ['schedule', 'source', 'destination'],
      'x-kubernetes-validations': [
        {
          rule:
            '!has(self.source.persistentVolumeClaim) || ' +
            'self.source.persistentVolumeClaim.claimName != self.destination.persistentVolumeClaim.claimName',
          message: 'source.persistentVolumeClaim.claimName must differ from destination.persistentVolumeClaim.claimName',
          fieldPath: '.destination.persistentVolumeClaim.claimName',
        },
      ],
      properties: {
        schedule: {
          type: 'string',
          minLength: 1,
          maxLength: 128,
          pattern: SCHEDULE_PATTERN,
          description:
            'Cron schedule as the CronJob API reads it: five fields ("0 2 * * *"; day of week 0-6 or SUN-SAT) ' +
            'or a macro (@hourly, @daily, @midnight, @weekly, @monthly, @yearly, @every <duration>). ' +
            'Time zones go in timeZone, not in the schedule.',
        },
        timeZone: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          pattern: TIME_ZONE_PATTERN,
          description: 'IANA time zone name for the schedule, case-sensitive, e.g. "Europe/Berlin"; passed to the CronJob\'s spec.timeZone. Defaults to the kube-controller-manager\'s zone.',
        },
        suspend: {
          type: 'boolean',
          default: false,
          description: 'Suspend stops scheduling new backups; running backups are not stopped.',
        },
        source: {
          type: 'object',
          title: 'BackupSource',
          description: 'What to back up: exactly one of etcd or persistentVolumeClaim.',
          'x-kubernetes-validations': [
            {
              rule: '(has(self.etcd) ? 1 : 0) + (has(self.persistentVolumeClaim) ? 1 : 0) == 1',
              message: 'exactly one of etcd or persistentVolumeClaim must be set',
            },
          ],
          properties: {
            etcd: {
              type: 'object',
              title: 'EtcdSource',
              description: 'Take an etcd snapshot from one of the endpoints.',
              required: ['endpoints'],
              'x-kubernetes-validations': [
                {
                  rule: "!has(self.tlsSecretName) || self.endpoints.all(e, e.startsWith('https://'))",
                  message: 'endpoints must use https:// when tlsSecretName is set',
                  fieldPath: '.endpoints',
                },
              ],
              properties: {
                endpoints: {
                  type: 'array',
                  minItems: 1,
                  maxItems: 9,
                  'x-kubernetes-list-type': 'set',
                  description: 'etcd client URLs, e.g. https://etcd-0.etcd:2379.',
                  items: {
                    type: 'string',
                    maxLength: 256,
                    pattern: ENDPOINT_PATTERN,
                    description: 'One etcd client URL (http:// or https://host:port).',
                  },
                },
                tlsSecretName: {
                  type: 'string',
                  maxLength: 253,
                  pattern: DNS1123_SUBDOMAIN,
                  description:
                    'Secret with the client certificate (tls.crt, tls.key) and CA (ca.crt) for etcd; mounted read-only.',
                },
              },
            },
            persistentVolumeClaim: {
              type: 'object',
              title: 'PersistentVolumeClaimSource',
              description: 'Archive the contents of a PersistentVolumeClaim (mounted read-only).',
              required: ['claimName'],
              properties: { claimName },
            },
          },
        },
        destination: {
          type: 'object',
          title: 'BackupDestination',
          description: 'Where backups are written.',
          required: ['persistentVolumeClaim'],
          properties: {
            persistentVolumeClaim: {
              type: 'object',
              title: 'PersistentVolumeClaimDestination',
              description: 'A PersistentVolumeClaim that receives the backups.',
              required: ['claimName'],
              properties: {
                claimName,
                path: {
                  type: 'string',
                  maxLength: 1024,
                  pattern: '^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*$',
                  'x-kubernetes-validations': [
                    { rule: "!self.split('/').exists(s, s == '..')", message: 'path must not contain ".." segments' },
                  ],
                  description: 'Directory inside the claim, relative, without ".." segments. Defaults to the claim\'s root.',
                },
              },
            },
          },
        },
        retention: {
          type: 'object',
          title: 'Retention',
          default: {},
          description: 'How many backups to keep.',
          properties: {
            keepLast: {
              type: 'integer',
              minimum: 1,
              maximum: 1000,
              default: 7,
              description: 'Number of most recent backups to keep; older ones are deleted after a successful backup.',
            },
          },
        },
        concurrencyPolicy: {
          type: 'string',
          enum: ['Allow', 'Forbid', 'Replace'],
          default: 'Forbid',
          description: 'What to do when a backup is still running at the next schedule (CronJob concurrencyPolicy). Forbid: backups must not overlap.',
        },
        startingDeadlineSeconds: {
          type: 'integer',
          format: 'int64',
          minimum: 0,
          maximum: 86400,
          description: 'Deadline in seconds for starting a backup that missed its scheduled time.',
        },
        successfulJobsHistoryLimit: {
          type: 'integer',
          format: 'int32',
          minimum: 0,
          maximum: 100,
          default: 3,
          description: 'Number of successful backup Jobs to keep.',
        },
        failedJobsHistoryLimit: {
          type: 'integer',
          format: 'int32',
          minimum: 0,
          maximum: 100,
          default: 1,
          description: 'Number of failed backup Jobs to keep.',
        },
        backoffLimit: {
          type: 'integer',
          format: 'int32',
          minimum: 0,
          maximum: 20,
          default: 3,
          description: 'Retries of a failed backup before its Job is marked failed.',
        },
        activeDeadlineSeconds: {
          type: 'integer',
          format: 'int64',
          minimum: 1,
          description: 'Maximum duration of one backup Job in seconds; unset means no limit.',
        },
        resources: {
          type: 'object',
          title: 'BackupResources',
          description: 'Compute resources of the backup container. Defaults: requests cpu 100m, memory 128Mi; limits memory 512Mi.',
          properties: {
            requests: resourceList,
            limits: resourceList,
          },
        },
        podSecurityContext: {
          type: 'object',
          title: 'BackupPodSecurityContext',
          description:
            'User and groups the backup Pod runs as, for data it could not read otherwise (a database\'s files are often mode 0600 of its own uid). Each field defaults to 65532, the image\'s non-root user. The Pod stays within the "restricted" Pod Security Standard: runAsNonRoot, seccomp RuntimeDefault, no privilege escalation, all capabilities dropped.',
          properties: {
            runAsUser: {
              type: 'integer',
              format: 'int64',
              minimum: 1,
              maximum: 2147483647,
              description: 'UID of the backup process, e.g. the owner of the source volume\'s files. Root (0) is refused: the Pod runs with runAsNonRoot.',
            },
            runAsGroup: {
              type: 'integer',
              format: 'int64',
              minimum: 0,
              maximum: 2147483647,
              description: 'Primary GID of the backup process.',
            },
            fsGroup: {
              type: 'integer',
              format: 'int64',
              minimum: 0,
              maximum: 2147483647,
              description: 'Supplementary group that owns the writable volumes (destination, TLS Secret); also added to the process\'s groups.',
            },
            fsGroupChangePolicy: {
              type: 'string',
              enum: ['OnRootMismatch', 'Always'],
              description: 'When the kubelet changes volume ownership to fsGroup: OnRootMismatch skips large volumes whose root already matches. Unset: the kubelet\'s default (Always).',
            },
            supplementalGroups: {
              type: 'array',
              maxItems: 32,
              'x-kubernetes-list-type': 'set',
              description: 'Additional GIDs of the backup process, e.g. the group that may read the source volume\'s files.',
              items: { type: 'integer', format: 'int64', minimum: 0, maximum: 2147483647, description: 'A GID.' },
            },
          },
        },
        image: {
          type: 'string',
          minLength: 1,
          maxLength: 512,
          pattern: '^[^\\s]+$',
          description: 'Container image that runs the backup (its "backup" subcommand). Defaults to the operator\'s --backup-image.',
        },
      },
    },
    status: {
      type: 'object',
      title: 'BackupScheduleStatus',
      description: 'Observed state, written only by the controller through the status subresource.',
      properties: {
        observedGeneration: {
          type: 'integer',
          format: 'int64',
          minimum: 0,
          description: 'metadata.generation the controller last acted on.',
        },
        cronJobName: { type: 'string', maxLength: 52, description: 'Name of the child CronJob.' },
        lastScheduleTime: {
          type: 'string',
          format: 'date-time',
          description: 'When a backup was last scheduled (from the CronJob\'s status).',
        },
        lastSuccessfulTime: {
          type: 'string',
          format: 'date-time',
          description: 'When a backup last completed successfully (from the backup Jobs, or the CronJob\'s status).',
        },
        lastFailedTime: {
          type: 'string',
          format: 'date-time',
          description: 'When a backup Job last failed.',
        },
        lastMissedTime: {
          type: 'string',
          format: 'date-time',
          description: 'When a backup was last due and not started in time (startingDeadlineSeconds, or 5 minutes without one, passed with no Job scheduled).',
        },
        recentRuns: {
          type: 'array',
          'x-kubernetes-list-type': 'atomic',
          maxItems: 5,
          description: 'The last finished backup Jobs, newest first (at most 5; kept after the CronJob\'s history limits delete the Jobs).',
          items: backupRun,
        },
        active: {
          type: 'array',
          maxItems: MAX_ACTIVE_JOBS,
          'x-kubernetes-list-type': 'set',
          description: `Names of the backup Jobs currently running, sorted; the first ${MAX_ACTIVE_JOBS} when more are.`,
          items: { type: 'string', maxLength: MAX_JOB_NAME_LENGTH, description: 'Name of a running Job.' },
        },
        conditions: {
          type: 'array',
          maxItems: MAX_CONDITIONS,
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['type'],
          description: 'Current conditions: Ready is True when the CronJob matches the spec; LastBackupSucceeded says how the last finished backup Job ended (Unknown until one has).',
          items: condition,
        },
      },
    },
  },
};
