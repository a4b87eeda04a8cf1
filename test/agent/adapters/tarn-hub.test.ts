// knex's pending creates (connections tarn is opening for waiters) reach a real hub from a knex pool
// on a real PostgreSQL as the sample's `opening`, shown in /api/state while they last and gone
// once the connections are open.
import knexFactory, { type Knex } from "knex";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { connect, instrument } from "../../../agent/src/index.js";
import type { ApiHubState } from "../../../shared/protocol/index.js";
import { startPostgres, type PostgresServer } from "../../../scripts/support/postgres.js";
import { cleanupAll, getJson, onCleanup, startHub, waitUntil } from "../../main/hub/helpers.js";
import { uniqueName } from "./helpers.js";

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterEach(cleanupAll);
afterAll(async () => {
  await server?.stop();
});

describe("knex pending creates on the hub", () => {
  it("shows connections being opened as `opening` in /api/state, and drops it once they are open", async () => {
    const hub = await startHub();
    const agent = connect({ url: hub.url, service: "knex-opening", instance: "k-1", intervalMs: 50 });
    onCleanup(() => agent.close());
    // knex's afterCreate runs inside tarn's create: held here, the connections stay pending creates.
    let openGate = (): void => undefined;
    const gate = new Promise<void>((r) => (openGate = r));
    const db: Knex = knexFactory({
      client: "pg",
      connection: server.url,
      pool: { min: 0, max: 4, afterCreate: (conn: unknown, done: (err: Error | null, conn: unknown) => void) => void gate.then(() => done(null, conn)) },
    });
    onCleanup(() => db.destroy());
    const name = uniqueName("knex");
    const h = instrument(db, { name });
    onCleanup(() => h.untrack());

    const state = async (): Promise<ApiHubState["semaphores"][number] | undefined> => (await getJson<ApiHubState>(hub, "/api/state")).body.semaphores.find((x) => x.name === name);
    // A knex query runs once something awaits it.
    const queries = [1, 2, 3].map(async (n) => db.raw(`select ${n}`));
    let seen: { opening?: number; waiters: number } | undefined;
    await waitUntil(async () => {
      const last = (await state())?.last;
      if (last == null || last.opening === undefined) return false;
      seen = { opening: last.opening, waiters: last.waiters };
      return true;
    }, "pending creates in /api/state", 10_000);
    expect(seen).toEqual({ opening: 3, waiters: 3 });

    openGate();
    await Promise.all(queries);
    await waitUntil(async () => {
      const last = (await state())?.last;
      return last != null && last.acquired + last.released > 0 && last.opening === undefined && last.waiters === 0;
    }, "no pending creates once the connections are open", 10_000);
  }, 60_000);
});
