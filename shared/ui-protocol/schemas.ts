// zod schemas for every `/ui` request a dashboard sends (./types.ts has the shapes). Numbers in
// thresholds are range-checked by the alert engine itself (applyThresholds), which names the field.
import { z } from "zod";
import type { ThresholdsPatch } from "../alerts/index.js";
import { WINDOW_COLUMNS, type WindowColumn } from "../history/index.js";
import { LIMITS } from "../protocol/types.js";
import { UI_LIMITS, type UiFleetHistoryRequest, type UiHistoryRequest } from "./types.js";

const shortString = z
  .string({ error: "must be a string" })
  .refine((s) => s.length <= LIMITS.maxString * 3 + 2, { error: "is too long" });
const epochMs = z.number({ error: "must be a finite number" }).refine(Number.isFinite, { error: "must be a finite number" });
const columnNames = new Set<string>(WINDOW_COLUMNS);

const windowFields = {
  tier: z.enum(["1s", "1m"], { error: 'must be "1s" or "1m"' }).optional(),
  from: epochMs.optional(),
  to: epochMs.optional(),
  columns: z
    .array(z.string().refine((c) => columnNames.has(c), { error: "is not a history column" }), { error: "must be an array" })
    .max(UI_LIMITS.maxColumns, { error: `must have at most ${UI_LIMITS.maxColumns} items` })
    .transform((cols) => cols as WindowColumn[])
    .optional(),
};

export const uiHistoryRequestSchema = z.object({ key: shortString, ...windowFields }) satisfies z.ZodType<UiHistoryRequest>;

export const uiFleetHistoryRequestSchema = z.object({
  service: shortString,
  name: shortString,
  ...windowFields,
}) satisfies z.ZodType<UiFleetHistoryRequest>;

export const uiAlertAckSchema = z.object({ id: z.string({ error: "must be a string" }).max(2048, { error: "is too long" }) });

const identifier = z.string().regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, { error: "must be a field name" });

/** A thresholds patch: `{ group: { field: number } }`; which groups and fields exist is the engine's call. */
export const thresholdsPatchSchema = z
  .record(identifier, z.record(identifier, z.number({ error: "must be a number" }), { error: "must be an object" }), {
    error: "must be an object",
  })
  .transform((p) => p as ThresholdsPatch);

export const uiThresholdsSetSchema = z.object({ patch: thresholdsPatchSchema });

/** Requests without parameters take `{}` (or nothing at all). */
export const uiEmptyRequestSchema = z.union([z.object({}), z.undefined(), z.null()]);
