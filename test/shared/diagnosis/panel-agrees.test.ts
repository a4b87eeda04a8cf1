// The Little's-law panel and the alert name one cause and one N: the convoy alert's diagnosis,
// made by the hub's pipeline (the recording replayed), against what the detail view computes from
// its chart columns (the live samples appended as the dashboard appends them) at the same moment.
import { describe, expect, it } from "vitest";
import { replayLines } from "../../../main/hub/index.js";
import { diagnoseColumns, type Diagnosis } from "../../../shared/diagnosis/index.js";
import type { UiSample } from "../../../shared/ui-protocol/types.js";
import { SeriesBuffer } from "../../../renderer/src/data/series-buffer.js";
import { DETAIL_COLUMNS, liveRow } from "../../../renderer/src/logic/live-row.js";
import { drawParams, recordingOf, simulate, type Scenario } from "./simulate.js";

describe.each<Scenario>(["slow", "tight", "rate"])("scenario %s", (scenario) => {
  it.each([1, 2, 3])("seed %i: the panel's cause and N are the alert diagnosis's for the same window", (seed) => {
    const sim = simulate(drawParams(scenario, seed), seed);
    // Three samples lost on the way, early on: neither the hub nor the page has them, and the
    // chart breaks its line there (a null row) where the hub's history simply has no row.
    sim.samples.splice(10, 3);
    const convoy = replayLines(recordingOf(sim)).alerts.find((a) => a.rule === "convoy");
    const alerted = convoy?.evidence?.diagnosis as Diagnosis | undefined;
    expect(alerted, "a diagnosis on the convoy alert").toBeDefined();
    const d = alerted as Diagnosis;

    const buffer = new SeriesBuffer(DETAIL_COLUMNS, 1000);
    for (const s of sim.samples) buffer.append(s.t, liveRow(s.sample as unknown as UiSample, 1000), 1000);
    expect(buffer.data.inUse).toContain(null);

    const panel = diagnoseColumns(buffer.t, buffer.data, d.incident.to);
    expect(panel).toEqual(d);
    expect(panel?.numbers.neededN ?? null).toBe(d.numbers.neededN);
  });
});
