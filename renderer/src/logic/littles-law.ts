// Moved to shared/diagnosis/ (the hub's alert diagnosis uses the same reading); kept here so the
// detail view's imports stay put.
export * from "../../../shared/diagnosis/littles-law.js";
