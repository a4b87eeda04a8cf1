/** Where bench:recording's replays seek, in turn, as shares of the recording: far and near, forward and back. */
export const SEEKS = [0.5, 0.25, 0.75, 0.1, 0.9, 0.05, 0.5] as const;
