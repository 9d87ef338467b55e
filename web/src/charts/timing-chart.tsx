import { formatMs, formatTickMs } from "../format.js";
import { niceTicks, type TurnTiming } from "../metrics.js";
import { ChartFrame, labelStride, type Margins, ValueAxis } from "./chart-frame.js";

const MARGINS: Margins = { top: 12, right: 12, bottom: 40, left: 56 };
const HEIGHT = 240;

const SERIES = [
  { key: "ttft_ms", label: "TTFT (first chat completion)", className: "series-ttft" },
  { key: "wall_time_ms", label: "Wall time", className: "series-wall" },
] as const;

/** Time to first token and wall time per turn, as grouped bars on one ms axis. */
export function TimingChart({ timings }: { timings: TurnTiming[] }) {
  const max = Math.max(
    0,
    ...timings.flatMap((timing) => [timing.ttft_ms ?? 0, timing.wall_time_ms ?? 0]),
  );
  const ticks = niceTicks(max, 5);
  const top = ticks.at(-1) ?? 1;
  const description = timings
    .map(
      (timing) =>
        `Turn ${timing.turn_index}: TTFT ${formatMs(timing.ttft_ms)}, wall time ${formatMs(timing.wall_time_ms)}.`,
    )
    .join(" ");
  return (
    <ChartFrame
      testId="chart-timing"
      title="TTFT and wall time per turn"
      description={description || "No turns."}
      legend={SERIES.map(({ label, className }) => ({ label, className }))}
      height={HEIGHT}
    >
      {(width) => {
        const plotWidth = Math.max(10, width - MARGINS.left - MARGINS.right);
        const plotHeight = HEIGHT - MARGINS.top - MARGINS.bottom;
        const y = (value: number) => MARGINS.top + plotHeight - (value / top) * plotHeight;
        const band = plotWidth / Math.max(1, timings.length);
        const barWidth = Math.max(2, Math.min(28, (band * 0.7) / SERIES.length));
        const groupWidth = barWidth * SERIES.length;
        const stride = labelStride(timings.length, plotWidth);
        return (
          <>
            <ValueAxis
              ticks={ticks}
              scale={y}
              margins={MARGINS}
              width={width}
              format={formatTickMs}
              label="time"
            />
            {timings.map((timing, index) => {
              const x0 = MARGINS.left + band * index + (band - groupWidth) / 2;
              return (
                <g key={timing.turn_index} className="bar-group">
                  {SERIES.map((series, seriesIndex) => {
                    const value = timing[series.key];
                    if (value === null) return null;
                    return (
                      <rect
                        key={series.key}
                        className={series.className}
                        x={x0 + seriesIndex * barWidth}
                        y={y(value)}
                        width={barWidth - 1}
                        height={Math.max(value > 0 ? 1 : 0, y(0) - y(value))}
                      >
                        <title>{`Turn ${timing.turn_index} · ${series.label}: ${formatMs(value)}`}</title>
                      </rect>
                    );
                  })}
                  {index % stride === 0 ? (
                    <text
                      className="axis-label"
                      x={x0 + groupWidth / 2}
                      y={HEIGHT - MARGINS.bottom + 16}
                      textAnchor="middle"
                    >
                      {timing.turn_index}
                    </text>
                  ) : null}
                </g>
              );
            })}
            <line
              className="axis-line"
              x1={MARGINS.left}
              x2={width - MARGINS.right}
              y1={y(0)}
              y2={y(0)}
            />
            <text
              className="axis-title"
              x={MARGINS.left + plotWidth / 2}
              y={HEIGHT - 6}
              textAnchor="middle"
            >
              turn
            </text>
          </>
        );
      }}
    </ChartFrame>
  );
}
