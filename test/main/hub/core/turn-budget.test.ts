// The hub's background work shares one budget per event-loop turn (core/turn-budget.ts). What the
// hub relies on: a turn's work stays within the budget however many jobs are queued; agents'
// work goes first; no kind of work waits for ever behind another; a turn already long from work
// done outside it does less. Work is counted on a clock the tasks advance, so what is measured
// is the budget's own decisions, not the machine's speed.
import { describe, expect, it } from "vitest";
import { AGENT_SHARE, MIN_SHARE, TurnBudget, type Task, type WorkKind } from "../../../../main/hub/core/turn-budget.js";

const TURN = 10;

/** A budget on a clock of its own, and each event-loop turn's steps as they ran. */
function rig() {
  let clock = 0;
  const budget = new TurnBudget({ turnMs: TURN, now: () => clock });
  const turns: { kind: WorkKind; name: string; at: number }[][] = [[]];
  let probing = true;
  // Runs once per turn of the loop, beside the budget's own callback: a new entry per turn.
  const probe = () => {
    if (!probing) return;
    if (turns[turns.length - 1]!.length > 0) turns.push([]);
    setImmediate(probe);
  };
  setImmediate(probe);
  /** A task of `steps` steps (Infinity: it always has more), each costing `ms` of the clock. */
  const task = (kind: WorkKind, name: string, steps: number, ms = 1) => {
    let left = steps;
    const t: Task & { left: () => number } = {
      kind,
      left: () => left,
      run(deadline) {
        do {
          turns[turns.length - 1]!.push({ kind, name, at: clock });
          clock += ms;
          left--;
        } while (left > 0 && clock < deadline);
        return left > 0;
      },
    };
    return t;
  };
  const spent = (turn: readonly { at: number }[]) => (turn.length === 0 ? 0 : turn[turn.length - 1]!.at + 1 - turn[0]!.at);
  const stop = () => {
    probing = false;
    budget.close();
  };
  return { budget, task, turns, spent, stop, advance: (ms: number) => void (clock += ms) };
}

const turnsPass = (n: number) =>
  new Promise<void>((resolve) => {
    const next = (left: number) => (left === 0 ? resolve() : setImmediate(() => next(left - 1)));
    next(n);
  });

describe("the turn budget", () => {
  it("keeps a turn's work within the budget however many jobs are queued", async () => {
    for (const jobs of [4, 40]) {
      const r = rig();
      const kinds: WorkKind[] = ["agents", "dashboards", "forgets", "scrapes"];
      const tasks = Array.from({ length: jobs }, (_, i) => r.task(kinds[i % 4]!, `t${i}`, 30));
      for (const t of tasks) r.budget.want(t);
      await turnsPass(40 * jobs);
      r.stop();
      // All done, and no turn did more than its budget plus the step that crossed it and one it owed.
      expect(tasks.map((t) => t.left())).toEqual(tasks.map(() => 0));
      const worst = Math.max(...r.turns.map(r.spent));
      expect(worst).toBeLessThanOrEqual(TURN + 2);
      // The work was spread over turns, not done in one: 30 steps per job.
      expect(r.turns.filter((t) => t.length > 0).length).toBeGreaterThanOrEqual((30 * jobs) / (TURN + 2));
    }
  });

  it("runs agents' work first, and their share of the turn while others wait", async () => {
    const r = rig();
    const agents = r.task("agents", "agent", Infinity);
    const others = [r.task("dashboards", "delta", Infinity), r.task("forgets", "forget", Infinity), r.task("scrapes", "scrape", Infinity)];
    for (const t of others) r.budget.want(t);
    r.budget.want(agents);
    await turnsPass(30);
    r.stop();
    const full = r.turns.filter((t) => t.length > 0);
    expect(full.length).toBeGreaterThan(20);
    for (const turn of full) {
      expect(turn[0]!.kind).toBe("agents");
      const agentSteps = turn.filter((s) => s.kind === "agents").length;
      expect(agentSteps).toBeGreaterThanOrEqual(Math.floor(TURN * AGENT_SHARE));
    }
  });

  it("starves no kind: each with work gets a step every few turns while agents always have more", async () => {
    const r = rig();
    r.budget.want(r.task("agents", "agent", Infinity));
    // Dashboards whose steps alone would fill every turn.
    r.budget.want(r.task("dashboards", "delta", Infinity, TURN));
    r.budget.want(r.task("forgets", "forget", Infinity));
    r.budget.want(r.task("scrapes", "scrape", Infinity));
    await turnsPass(40);
    r.stop();
    const full = r.turns.filter((t) => t.length > 0);
    for (const kind of ["dashboards", "forgets", "scrapes"] as const) {
      const ran = full.map((t) => t.some((s) => s.kind === kind));
      // In every three turns running, at least one step of each kind.
      for (let i = 0; i + 3 <= ran.length; i++) expect(ran.slice(i, i + 3).includes(true), `${kind} in turns ${i}..${i + 2}`).toBe(true);
    }
  });

  it("does less in a turn that work done outside it already made long", async () => {
    const r = rig();
    const agents = r.task("agents", "agent", Infinity);
    r.budget.want(agents);
    await turnsPass(3);
    const before = r.turns.filter((t) => t.length > 0).length;
    // Work charged in the rest of the loop's turn (a socket's message): the budget's own part shrinks.
    r.advance(8);
    r.budget.charge(8);
    await turnsPass(1);
    r.stop();
    const after = r.turns.filter((t) => t.length > 0);
    expect(after.length).toBeGreaterThan(before);
    // Down to its floor, not to nothing: queued work still moves under heavy I/O.
    const least = Math.min(...after.slice(before).map(r.spent));
    expect(least).toBeLessThanOrEqual(TURN * MIN_SHARE + 1);
    expect(least).toBeGreaterThanOrEqual(TURN * MIN_SHARE);
    expect(r.spent(after[0]!)).toBeGreaterThanOrEqual(TURN);
  });

  it("resolves next() in a coming turn, and every waiter when it closes", async () => {
    const r = rig();
    let resolved = 0;
    const waits = Array.from({ length: 3 }, () => r.budget.next("scrapes").then(() => void resolved++));
    expect(resolved).toBe(0);
    await Promise.all(waits);
    expect(resolved).toBe(3);
    const late = r.budget.next("scrapes");
    r.stop();
    await late;
  });
});
