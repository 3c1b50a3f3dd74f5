/**
 * The JSON text of stored objects, computed once per object. Stored objects are never mutated
 * (storage.ts), so their text can be shared, as kube-apiserver's watch cache shares one serialization
 * of an event among its watchers (`cachingObject`): every watch stream of the object's resource, and
 * the answer to the write that stored it, which is sent after the watchers were handed the event.
 */
const texts = new WeakMap<object, string>();

/** `JSON.stringify(stored)`, remembered for the object. Only for stored (never mutated) objects. */
export function storedJson(stored: object): string {
  let text = texts.get(stored);
  if (text === undefined) {
    text = JSON.stringify(stored);
    texts.set(stored, text);
  }
  return text;
}

/** The text {@link storedJson} already made for `obj`, if any (it never serializes by itself). */
export function knownJson(obj: object): string | undefined {
  return texts.get(obj);
}
