// connect()'s defaults and argument checks.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { connect } from "../../../agent/src/index.js";
import { resolveOptions } from "../../../agent/src/reporter/connect-options.js";
import { defaultService } from "../../../agent/src/reporter/identity.js";

const saved = { ...process.env };
afterEach(() => {
  for (const k of ["SEMSCOPE_URL", "SEMSCOPE_TOKEN", "SEMSCOPE_SERVICE"]) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
});

describe("connect() options", () => {
  it("defaults to the environment, then to the documented values", () => {
    for (const k of ["SEMSCOPE_URL", "SEMSCOPE_TOKEN", "SEMSCOPE_SERVICE"]) delete process.env[k];
    const d = resolveOptions({ service: "svc" });
    expect(d).toEqual({
      url: "http://127.0.0.1:7420",
      token: undefined,
      service: "svc",
      instance: `${hostname()}:${process.pid}`,
      intervalMs: 1000,
      bufferBatches: 600,
      bufferBytes: 16 * 1024 * 1024,
    });
    process.env.SEMSCOPE_URL = "http://hub.internal:9000/";
    process.env.SEMSCOPE_TOKEN = "t0k";
    process.env.SEMSCOPE_SERVICE = "from-env";
    expect(resolveOptions({})).toMatchObject({ url: "http://hub.internal:9000", token: "t0k", service: "from-env" });
    expect(resolveOptions({ url: "https://h:1", token: "mine", service: "given" })).toMatchObject({ url: "https://h:1", token: "mine", service: "given" });
    expect(resolveOptions({ token: "" }).token).toBe("t0k");
  });

  it("names the service after the main script's package, else its file", () => {
    const dir = mkdtempSync(join(tmpdir(), "semscope-svc-"));
    mkdirSync(join(dir, "src", "deep"), { recursive: true });
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "@acme/checkout" }));
    expect(defaultService(join(dir, "src", "deep", "server.js"))).toBe("@acme/checkout");
    const bare = mkdtempSync(join(tmpdir(), "semscope-bare-"));
    expect(defaultService(join(bare, "worker.mjs"))).toBe("worker");
    // No main script (a REPL, node -e).
    expect(defaultService("")).toBe("node");
  });

  it("throws a TypeError or RangeError that names the bad option", () => {
    expect(() => connect({ url: "not a url" })).toThrow(TypeError);
    expect(() => connect({ url: "ftp://h:1" })).toThrow(/http or https/);
    expect(() => connect({ url: "http://h:1/agent" })).toThrow(/path/);
    expect(() => connect({ intervalMs: 0 })).toThrow(RangeError);
    expect(() => connect({ intervalMs: "1000" as unknown as number })).toThrow(/intervalMs must be a number/);
    expect(() => connect({ bufferBatches: 1.5 })).toThrow(/bufferBatches must be an integer/);
    expect(() => connect({ bufferBytes: 10 })).toThrow(RangeError);
    expect(() => connect({ service: 42 as unknown as string })).toThrow(/service must be a string/);
    expect(() => connect({ service: "" })).toThrow(RangeError);
    expect(() => connect(null as unknown as undefined)).toThrow(TypeError);
  });
});
