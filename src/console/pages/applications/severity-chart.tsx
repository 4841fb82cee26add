/**
 * Vulnerable packages by severity over the analyses: a stacked bar chart drawn as SVG by Preact, with
 * d3-scale for the scales and ticks. SVG keeps text real (zoomable, readable by assistive technology)
 * and needs no inline style (strict CSP); the same numbers are in a table right below it.
 */
import { scaleBand, scaleLinear } from "d3-scale";
import { SEVERITIES, type Severity } from "../../../contracts/platform.ts";
import type { AnalysisHistoryEntry } from "../../../contracts/resources.ts";

/** Fills with ≥ 3:1 contrast against white (WCAG 1.4.11 non-text contrast); legend names each one. */
const SEVERITY_FILL: Record<Severity, string> = {
  CRITICAL: "#8b0000",
  HIGH: "#c2410c",
  MEDIUM: "#a16207",
  LOW: "#1d4ed8",
  UNKNOWN: "#4b5563",
};

const WIDTH = 640;
const HEIGHT = 260;
const M = { top: 12, right: 12, bottom: 48, left: 40 };

export function SeverityChart({ history }: { history: AnalysisHistoryEntry[] }) {
  const days = history.map((h) => h.analysis.dateTime);
  const totals = history.map((h) => SEVERITIES.reduce((n, s) => n + h.vulnerablePackagesBySeverity[s], 0));
  const x = scaleBand<string>()
    .domain(days)
    .range([M.left, WIDTH - M.right])
    .padding(0.25);
  const y = scaleLinear()
    .domain([0, Math.max(1, ...totals)])
    .nice()
    .range([HEIGHT - M.bottom, M.top]);
  const ticks = y.ticks(Math.min(5, y.domain()[1] ?? 1)).filter(Number.isInteger);
  const labelEvery = Math.max(1, Math.ceil(days.length / 8));
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby="sev-chart-title sev-chart-desc"
        preserveAspectRatio="xMidYMid meet"
      >
        <title id="sev-chart-title">Vulnerable packages by severity over the analyses</title>
        <desc id="sev-chart-desc">
          {history
            .map((h, i) => `${h.analysis.dateTime.slice(0, 10)}: ${totals[i]} vulnerable packages`)
            .join("; ")}
          . The table below gives each severity.
        </desc>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={M.left} x2={WIDTH - M.right} y1={y(t)} y2={y(t)} class="grid" stroke="#d1d5db" />
            <text x={M.left - 6} y={y(t)} text-anchor="end" dominant-baseline="middle" class="tick">
              {t}
            </text>
          </g>
        ))}
        {history.map((h, i) => {
          let base = 0;
          const day = h.analysis.dateTime;
          return (
            <g key={day}>
              {[...SEVERITIES].reverse().map((s) => {
                const n = h.vulnerablePackagesBySeverity[s];
                if (n === 0) return null;
                const top = y(base + n);
                const rect = (
                  <rect
                    key={s}
                    x={x(day)}
                    y={top}
                    width={x.bandwidth()}
                    height={y(base) - top}
                    fill={SEVERITY_FILL[s]}
                    stroke="#ffffff"
                  />
                );
                base += n;
                return rect;
              })}
              {i % labelEvery === 0 ? (
                <text
                  x={(x(day) ?? 0) + x.bandwidth() / 2}
                  y={HEIGHT - M.bottom + 16}
                  text-anchor="middle"
                  class="tick"
                >
                  {day.slice(0, 10)}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend" aria-label="Severities">
          {SEVERITIES.map((s) => (
            <li key={s}>
              <svg width="12" height="12" aria-hidden="true" viewBox="0 0 12 12">
                <rect width="12" height="12" fill={SEVERITY_FILL[s]} />
              </svg>
              {s}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}

/** The chart's numbers as a table: its text alternative, and handy on its own. */
export function SeverityTable({ history }: { history: AnalysisHistoryEntry[] }) {
  return (
    <div class="table-scroll">
      <table>
        <caption>Vulnerable packages by severity, per analysis</caption>
        <thead>
          <tr>
            <th scope="col">Analysis</th>
            {SEVERITIES.map((s) => (
              <th scope="col" key={s}>
                {s}
              </th>
            ))}
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {history.map((h) => (
            <tr key={h.analysis.dateTime}>
              <th scope="row">{h.analysis.dateTime.slice(0, 10)}</th>
              {SEVERITIES.map((s) => (
                <td class="numeric" key={s}>
                  {h.vulnerablePackagesBySeverity[s]}
                </td>
              ))}
              <td class="numeric">{h.counts.vulnerablePackages}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
