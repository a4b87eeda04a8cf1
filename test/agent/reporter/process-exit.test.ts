// The agent never keeps a process alive, and close() flushes within 2 s: checked on real
// child processes (node --import tsx), against a dead port, a live hub, and a hub that never acks.
import { spawn } from "node:child_process";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { deadPort, FakeHub } from "./fake-hub.js";

const CHILD = fileURLToPath(new URL("./fixtures/child-agent.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

interface ChildResult {
  code: number | null;
  report: { agentId: string; workDoneAt: number; closeMs?: number; status?: { connected: boolean; bufferedBatches: number } };
  /** From the end of the child's work to its exit. */
  lingerMs: number;
  stderr: string;
}

function runChild(url: string, close: boolean): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", CHILD], {
      cwd: ROOT,
      env: { ...process.env, SEMSCOPE_URL: url, CLOSE: close ? "1" : "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // A child that hangs is the failure under test: kill it and report rather than wait forever.
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("error", reject);
    child.on("exit", (code) => {
      clearTimeout(killer);
      const exitedAt = Date.now();
      try {
        const report = JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as ChildResult["report"];
        resolve({ code, report, lingerMs: exitedAt - report.workDoneAt, stderr });
      } catch {
        reject(new Error(`child printed no report (exit ${code}): ${stdout}\n${stderr}`));
      }
    });
  });
}

const hubs: FakeHub[] = [];
afterEach(async () => {
  while (hubs.length > 0) await hubs.pop()?.stop();
});

async function hub(options?: ConstructorParameters<typeof FakeHub>[0]): Promise<FakeHub> {
  const h = await new FakeHub(options).start();
  hubs.push(h);
  return h;
}

describe("the host process", () => {
  it("exits by itself when its work is done, with the hub unreachable", async () => {
    const r = await runChild(`http://127.0.0.1:${await deadPort()}`, false);
    expect(r.code).toBe(0);
    expect(r.lingerMs).toBeLessThan(1000);
  });

  it("exits by itself when its work is done, while connected to a live hub", async () => {
    const h = await hub();
    const r = await runChild(h.url, false);
    expect(r.code).toBe(0);
    expect(r.lingerMs).toBeLessThan(1000);
    expect(h.received("hello").length).toBe(1);
  });

  it("exits by itself while a connection attempt hangs (a hub that accepts TCP and never answers)", async () => {
    const sockets: Socket[] = [];
    const hung = createServer((s) => sockets.push(s));
    await new Promise<void>((resolve) => hung.listen(0, "127.0.0.1", () => resolve()));
    try {
      const r = await runChild(`http://127.0.0.1:${(hung.address() as AddressInfo).port}`, false);
      expect(r.code).toBe(0);
      // Without unref'd sockets it would wait for the 10 s connect timeout.
      expect(r.lingerMs).toBeLessThan(1000);
      expect(sockets.length).toBeGreaterThan(0);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  it("close() flushes the last interval to a live hub well within 2 s", async () => {
    const h = await hub();
    const r = await runChild(h.url, true);
    expect(r.code).toBe(0);
    expect(r.report.closeMs).toBeLessThan(2000);
    expect(r.report.status?.bufferedBatches).toBe(0);
    // Every acquire the child made reached the hub, the last partial interval included.
    let acquired = 0;
    for (const b of h.batches.get(r.report.agentId)?.values() ?? []) for (const s of b.items) if (s.id === "child-db") acquired += s.acquired;
    expect(acquired).toBe(20);
    // A fresh process: its agent's seq starts at 0 and has no gap.
    const seqs = h.seqs(r.report.agentId);
    expect(seqs[0]).toBe(0);
    expect(seqs.at(-1)).toBe(seqs.length - 1);
    expect(h.invalid).toEqual([]);
  });

  it("close() gives up after 2 s on a hub that never acks, and the process exits", async () => {
    const h = await hub({ ackMode: "hello-only" });
    const r = await runChild(h.url, true);
    expect(r.code).toBe(0);
    expect(r.report.closeMs).toBeGreaterThan(1900);
    expect(r.report.closeMs).toBeLessThan(2800); // the 2 s deadline, plus slack for a loaded CI box
    expect(r.lingerMs).toBeLessThan(3000);
  });

  it("close() returns at once when the hub is unreachable", async () => {
    const r = await runChild(`http://127.0.0.1:${await deadPort()}`, true);
    expect(r.code).toBe(0);
    expect(r.report.closeMs).toBeLessThan(1000);
    expect(r.report.status?.connected).toBe(false);
  });
});
