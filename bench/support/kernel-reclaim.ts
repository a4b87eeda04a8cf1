// Whether the kernel runs DAMON (a memory-access monitor that can page out what it finds cold)
// while a benchmark runs: on machines of this kind it is on, and it costs a process in proportion to
// its resident memory, so a hub holding ~1.4 GB of history pays more for it than a bare server of
// ~100 MB. A report says which it ran under.
import { readdirSync, readFileSync } from "node:fs";

const ROOT = "/sys/kernel/mm/damon/admin/kdamonds";

/** "on" when any kdamond runs, "off" when none does, "absent" without DAMON's sysfs. */
export function damonState(): "on" | "off" | "absent" {
  let ids: string[];
  try {
    ids = readdirSync(ROOT).filter((d) => /^\d+$/.test(d));
  } catch {
    return "absent";
  }
  for (const id of ids) {
    try {
      if (readFileSync(`${ROOT}/${id}/state`, "utf8").trim() === "on") return "on";
    } catch {
      // A kdamond removed meanwhile is not running.
    }
  }
  return "off";
}
