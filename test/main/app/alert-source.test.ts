import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AlertPoller, localAlertReader, remoteAlertReader, type AlertUpdate } from "../../../main/app/alert-source.js";
import { makeAlert } from "./make-alert.js";

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

/** A real HTTP server standing in for a remote hub's /api/alerts. */
async function hub(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("remoteAlertReader", () => {
  it("reads /api/alerts with the bearer token and keeps the active alerts", async () => {
    const active = makeAlert();
    const resolved = makeAlert({ resolvedAt: 5 });
    let auth: string | undefined;
    let path: string | undefined;
    const origin = await hub((req, res) => {
      auth = req.headers.authorization;
      path = req.url;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ alerts: [active, resolved] }));
    });
    expect(await remoteAlertReader(origin, "tok3n")()).toEqual([active]);
    expect(auth).toBe("Bearer tok3n");
    expect(path).toBe("/api/alerts");
    await remoteAlertReader(origin, null)();
    expect(auth).toBeUndefined();
  });

  it("rejects an HTTP error, an answer that is not a list of alerts, and a redirect", async () => {
    let mode = "401";
    const origin = await hub((_req, res) => {
      if (mode === "401") {
        res.statusCode = 401;
        res.end();
      } else if (mode === "junk") res.end(JSON.stringify({ alerts: [{ id: 1 }] }));
      else {
        res.statusCode = 302;
        res.setHeader("location", "https://evil.example/");
        res.end();
      }
    });
    await expect(remoteAlertReader(origin, null)()).rejects.toThrow("HTTP 401");
    mode = "junk";
    await expect(remoteAlertReader(origin, null)()).rejects.toThrow("not a list of alerts");
    mode = "redirect";
    await expect(remoteAlertReader(origin, null)()).rejects.toThrow();
  });

  it("stops reading an answer that grows past 8 MiB without saying its length", async () => {
    let sent = 0;
    const origin = await hub((_req, res) => {
      res.writeHead(200, { "Content-Type": "application/json" });
      // Chunked and endless: only a reader that counts as it reads ever stops.
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) sent += chunk.length;
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    await expect(remoteAlertReader(origin, null, { timeoutMs: 20_000 })()).rejects.toThrow(/answer too large \(over 8388608 bytes\)/);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("gives up on a hub that does not answer", async () => {
    const origin = await hub(() => undefined);
    await expect(remoteAlertReader(origin, null, { timeoutMs: 50 })()).rejects.toThrow();
  });

  it("rejects when nothing listens", async () => {
    const origin = await hub(() => undefined);
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    await expect(remoteAlertReader(origin, null)()).rejects.toThrow();
  });
});

describe("AlertPoller", () => {
  it("reads at once, then every interval, never two at a time, and stops", async () => {
    let reads = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    const updates: AlertUpdate[] = [];
    const poller = new AlertPoller(
      async () => {
        reads++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await new Promise((r) => setTimeout(r, 15));
        inFlight--;
        return [];
      },
      5,
      (u) => updates.push(u),
    );
    poller.start();
    poller.start(); // idempotent
    await vi.waitFor(() => expect(updates.length).toBeGreaterThanOrEqual(3));
    poller.stop();
    const seen = reads;
    await new Promise((r) => setTimeout(r, 60));
    expect(reads).toBeLessThanOrEqual(seen + 1);
    expect(maxInFlight).toBe(1);
    expect(updates.every((u) => u.ok)).toBe(true);
  });

  it("hands on read failures and keeps polling; a failing consumer does not stop it", async () => {
    let n = 0;
    const updates: AlertUpdate[] = [];
    const log: string[] = [];
    const poller = new AlertPoller(
      () => (++n % 2 === 0 ? Promise.reject(new Error("down")) : Promise.resolve([])),
      1,
      (u) => {
        updates.push(u);
        if (updates.length === 1) throw new Error("consumer broke");
      },
      (line) => log.push(line),
    );
    poller.start();
    await vi.waitFor(() => expect(updates.length).toBeGreaterThanOrEqual(4));
    poller.stop();
    expect(updates).toContainEqual({ ok: false, error: "down" });
    expect(log).toEqual(["semscope: alert update failed: consumer broke"]);
  });

  it("reads the local engine in-process", async () => {
    const a = makeAlert();
    expect(await localAlertReader({ activeAlerts: () => [a] })()).toEqual([a]);
  });
});
