// semaphoreKey() for one (service, instance), remembered per id: the hub looks up several maps
// per sample item by its key, and building `<service>/<instance>/<id>` afresh for each item made
// a new string (hashed again at every lookup, and kept by whichever set or map holds it) per
// item per second. The id from the packet is a short string; its entry here gives back the one key.
import { MANY_SEMAPHORES_PER_AGENT, semaphoreKey } from "./types.js";

/** Ids remembered at most; past it the cache starts over (an agent churning ids through registers). */
const MAX_IDS = 2 * MANY_SEMAPHORES_PER_AGENT;

export class SemaphoreKeys {
  private readonly byId = new Map<string, string>();

  constructor(
    readonly service: string,
    readonly instance: string,
  ) {}

  key(id: string): string {
    let key = this.byId.get(id);
    if (key === undefined) {
      if (this.byId.size >= MAX_IDS) this.byId.clear();
      key = semaphoreKey(this.service, this.instance, id);
      this.byId.set(id, key);
    }
    return key;
  }
}
