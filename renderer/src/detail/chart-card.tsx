// A chart in a card, with its export buttons: PNG (the canvas, titled) and CSV (its columns).
import { useCallback, useRef, useState } from "react";
import { Icon } from "../app/widgets.js";
import { exportCsv, exportPng } from "../charts/chart-export.js";
import type { ChartFeed, ChartSpec } from "../charts/chart-spec.js";
import { axisUnit, UplotChart, type ChartHandle } from "../charts/uplot-chart.js";

export interface ChartCardProps {
  spec: ChartSpec;
  feed: ChartFeed;
  themeKey: string;
  /** For file names and the PNG's caption: service, instance, semaphore. */
  nameParts: readonly string[];
}

export function ChartCard({ spec, feed, themeKey, nameParts }: ChartCardProps) {
  const handle = useRef<ChartHandle | null>(null);
  const [busy, setBusy] = useState(false);
  const onReady = useCallback((h: ChartHandle | null) => (handle.current = h), []);
  const png = async () => {
    if (handle.current === null) return;
    setBusy(true);
    try {
      await exportPng(handle.current, nameParts, nameParts.join(" / "));
    } finally {
      setBusy(false);
    }
  };
  const csv = () => {
    if (handle.current !== null) exportCsv(handle.current, nameParts);
  };
  return (
    <div className="card chart-card" data-chart={spec.id}>
      <div className="card-head">
        <div>
          <h3>{spec.title}</h3>
          {spec.subtitle !== undefined && <span className="muted small">{spec.subtitle}</span>}
        </div>
        <div className="card-actions">
          <button className="btn btn-ghost btn-xs" onClick={() => void png()} disabled={busy} title="Download this chart as PNG" data-testid={`png-${spec.id}`}>
            <Icon name="download" /> PNG
          </button>
          <button className="btn btn-ghost btn-xs" onClick={csv} title="Download this chart's data as CSV" data-testid={`csv-${spec.id}`}>
            <Icon name="download" /> CSV
          </button>
        </div>
      </div>
      <div className="axis-units small muted">
        <span className="axis-unit" data-testid="axis-unit-y">
          {axisUnit(spec.yLabel, spec.y)}
        </span>
        {spec.y2 !== undefined && (
          <span className="axis-unit" data-testid="axis-unit-y2">
            {axisUnit(spec.y2Label ?? "", spec.y2)}
          </span>
        )}
      </div>
      <UplotChart spec={spec} feed={feed} themeKey={themeKey} onReady={onReady} />
    </div>
  );
}
