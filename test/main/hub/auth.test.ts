// Who gets in: handshake tokens and protocol numbers on /agent and /ui, Bearer tokens on HTTP,
// browser origins, and the options a hub refuses to start with.
import { get as httpGet } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createHub, HubConfigError } from "../../../main/hub/index.js";
import { agent, cleanupAll, client, getJson, startHub } from "./helpers.js";

afterEach(cleanupAll);

describe("handshake auth", () => {
  it("lets a client in without a token when the hub has none, and refuses another protocol", async () => {
    const hub = await startHub();
    const ok = await client(hub.url, "/agent");
    expect(ok.connected).toBe(true);
    await expect(client(hub.url, "/agent", { auth: { protocol: 2 } })).rejects.toThrow("unsupported_protocol");
    await expect(client(hub.url, "/agent", { auth: {} })).rejects.toThrow("unsupported_protocol");
    await expect(client(hub.url, "/ui", { auth: { protocol: "1" } })).rejects.toThrow("unsupported_protocol");
    expect(hub.state().hub.rejected).toBe(3);
  });

  it("with a token: missing or wrong is unauthorized (checked before protocol), right gets in", async () => {
    const hub = await startHub({ token: "s3cret" });
    await expect(client(hub.url, "/agent", { auth: { protocol: 1 } })).rejects.toThrow("unauthorized");
    await expect(client(hub.url, "/agent", { auth: { protocol: 1, token: "s3cre" } })).rejects.toThrow("unauthorized");
    await expect(client(hub.url, "/agent", { auth: { protocol: 1, token: "s3cret-and-more" } })).rejects.toThrow("unauthorized");
    await expect(client(hub.url, "/agent", { auth: { protocol: 9, token: "wrong" } })).rejects.toThrow("unauthorized");
    await expect(client(hub.url, "/agent", { auth: { protocol: 9, token: "s3cret" } })).rejects.toThrow("unsupported_protocol");
    await expect(client(hub.url, "/ui", { auth: { protocol: 1 } })).rejects.toThrow("unauthorized");
    const s = await agent(hub, "a1", [], {}, { protocol: 1, token: "s3cret" });
    expect(s.connected).toBe(true);
    const ui = await client(hub.url, "/ui", { auth: { protocol: 1, token: "s3cret" } });
    expect(ui.connected).toBe(true);
    expect(hub.state().hub.rejected).toBe(6);
  });

  it("refuses the main namespace", async () => {
    const hub = await startHub();
    await expect(client(hub.url, "/" as "/agent")).rejects.toThrow(/unknown namespace/);
  });
});

describe("HTTP auth", () => {
  it("needs the Bearer token on everything but /healthz", async () => {
    const hub = await startHub({ token: "s3cret" });
    expect((await getJson(hub, "/healthz")).body).toEqual({ ok: true });
    for (const path of ["/api/state", "/api/alerts", "/metrics", "/api/fleet", "/api/thresholds"]) {
      const none = await getJson(hub, path);
      expect(none.status, path).toBe(401);
      expect(none.body).toEqual({ error: "unauthorized" });
      expect((await getJson(hub, path, { headers: { Authorization: "Bearer nope" } })).status).toBe(401);
      expect((await getJson(hub, path, { headers: { Authorization: "s3cret" } })).status).toBe(401);
      expect((await getJson(hub, path, { headers: { Authorization: "Bearer s3cret" } })).status, path).toBe(200);
    }
  });

  it("refuses browser pages from other origins and DNS-rebound host names", async () => {
    const hub = await startHub();
    expect((await getJson(hub, "/api/state", { headers: { Origin: "http://evil.example" } })).status).toBe(403);
    expect((await getJson(hub, "/api/state", { headers: { Origin: hub.url } })).status).toBe(200);
    // fetch will not set Host; node:http will.
    const rebound = await new Promise<number>((resolve, reject) => {
      const req = httpGet({ host: "127.0.0.1", port: hub.port, path: "/api/state", headers: { Host: `evil.example:${hub.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
    });
    expect(rebound).toBe(403);
    const allowed = await startHub({ allowedOrigins: ["app://semscope"] });
    expect((await getJson(allowed, "/api/state", { headers: { Origin: "app://semscope" } })).status).toBe(200);
  });
});

describe("start-up checks", () => {
  it("refuses a non-loopback host without a token", async () => {
    await expect(createHub({ port: 0, host: "0.0.0.0" })).rejects.toThrow(HubConfigError);
    await expect(createHub({ port: 0, host: "0.0.0.0" })).rejects.toThrow(/without a token/);
  });

  it("binds a non-loopback host when given a token", async () => {
    const hub = await startHub({ host: "0.0.0.0", token: "t" });
    expect(hub.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });

  it("refuses a token over 256 characters, an empty one, and bad thresholds", async () => {
    await expect(createHub({ port: 0, token: "x".repeat(257) })).rejects.toThrow(/at most 256/);
    await expect(createHub({ port: 0, token: "" })).rejects.toThrow(HubConfigError);
    await expect(createHub({ port: 0, thresholds: { convoy: { windowMs: -1 } } })).rejects.toThrow(HubConfigError);
    const hub = await startHub({ token: "x".repeat(256) });
    expect(hub.port).toBeGreaterThan(0);
  });

  it("names createHub's option fields in its errors (the command line names its flags instead)", async () => {
    const refused = async (opts: Parameters<typeof createHub>[0]) => {
      const err: unknown = await createHub({ port: 0, ...opts }).then(
        (hub) => hub.close().then(() => undefined),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(HubConfigError);
      return (err as HubConfigError).message;
    };
    expect(await refused({ agentToken: "a" })).toBe("agentToken needs token: without it the dashboard and the API would be open while agents need a token");
    expect(await refused({ token: "t", agentToken: "t" })).toBe("agentToken must differ from token, or it would open the dashboard too");
    expect(await refused({ host: "0.0.0.0" })).toBe("refusing to listen on 0.0.0.0 without a token: anything but loopback needs token");
    expect(await refused({ admission: { maxAgents: 0 } })).toBe("admission.maxAgents must be an integer in 1..100000000, got 0");
    expect(await refused({ alertForwarding: { dashboardUrl: "nope" } })).toBe('dashboardUrl: not a URL: "nope"');
  });
});
