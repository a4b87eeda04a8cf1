// Reading the numbers for a cause: Little's law (the detail view's readout) and the alert diagnosis.
export * from "./littles-law.js";
export * from "./diagnose.js";
export * from "./flight-timeline.js";
export * from "./columns-series.js";
