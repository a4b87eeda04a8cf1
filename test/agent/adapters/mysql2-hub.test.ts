// mysql2's pool under instrument() against a real MariaDB, streamed by the real agent in a child
// process to a real hub: a connection never released on an error path raises the hub's `leak`
// alert, whose evidence names the line in the service that took the connection.
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Alert } from "../../../shared/protocol/index.js";
import { startMariaDb, type MariaDbServer } from "../../../scripts/support/mariadb.js";
import { firstUserFrame } from "../semantic-suite.js";
import { cleanupAll, startHub } from "../../main/hub/helpers.js";
import { until } from "./helpers.js";
import { killServices, startService } from "./service-child.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/mysql2-service.ts", import.meta.url));

type Msg = { type: "leaked"; at: { file: string; line: number } };

let server: MariaDbServer;

beforeAll(async () => {
  server = await startMariaDb();
}, 60_000);
afterAll(() => server?.stop());
// The service first, so its agent does not see the hub go away.
afterEach(async () => {
  await killServices();
  await cleanupAll();
});

describe("mysql2 pool adapter on a real MariaDB, through a real hub", () => {
  it("a connection never released on an error path raises `leak` naming the line that took it", async () => {
    const hub = await startHub();
    const svc = startService<Msg>(FIXTURE, { DB_HOST: server.host, DB_PORT: String(server.port), HUB_URL: hub.url, INSTANCE: "m-1" });
    const leaked = await svc.next("leaked", 30_000);
    expect(leaked.at.file).toBe(FIXTURE);
    const key = "mysql-svc/m-1/mysql";
    const leak = await until(() => hub.state().alerts.find((a: Alert) => a.rule === "leak" && a.key === key), "a leak alert on the hub", 20_000);
    const holders = (leak.evidence as { holders: { stack?: string }[] }).holders;
    expect(holders).toHaveLength(1);
    expect(firstUserFrame(holders[0].stack)).toEqual(leaked.at);
  }, 60_000);
});
