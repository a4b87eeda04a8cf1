// The protocol in one import: types, the hub's extra bounds, and the schemas that enforce them.
// Code that must not bundle zod (the agent) imports ./types.js and ./payload-limits.js directly.
export * from "./types.js";
export * from "./payload-limits.js";
export * from "./schemas.js";
export * from "./global-view.js";
export * from "./sample-activity.js";
export * from "./sample-layout.js";
