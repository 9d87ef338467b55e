import type { TurnUsageRollup } from "../api-types.js";
import { formatInt, formatTickCount } from "../format.js";
import { niceTicks } from "../metrics.js";
import { ChartFrame, labelStride, type Margins, ValueAxis } from "./chart-frame.js";

const MARGINS: Margins = { top: 12, right: 12, bottom: 40, left: 56 };
const HEIGHT = 240;

const SERIES = [
  { key: "uncached", label: "Prompt (not cached)", className: "series-prompt" },
  { key: "cached", label: "Prompt (cached)", className: "series-cached" },
  { key: "completion", label: "Completion", className: "series-completion" },
] as const;

/** Tokens per turn as stacked bars: prompt not cached, cached prompt, completion. */
export function TokensChart({ turns }: { turns: TurnUsageRollup[] }) {
  const max = Math.max(0, ...turns.map((turn) => turn.prompt_tokens + turn.completion_tokens));
  const ticks = niceTicks(max, 5, 1);
  const top = ticks.at(-1) ?? 1;
  const description = turns
    .map(
      (turn) =>
        `Turn ${turn.turn_index}: ${turn.prompt_tokens - turn.cached_tokens} prompt not cached, ${turn.cached_tokens} cached, ${turn.completion_tokens} completion.`,
    )
    .join(" ");
  return (
    <ChartFrame
      testId="chart-tokens"
      title="Tokens per turn"
      description={description || "No turns."}
      legend={SERIES.map(({ label, className }) => ({ label, className }))}
      height={HEIGHT}
    >
      {(width) => {
        const plotWidth = Math.max(10, width - MARGINS.left - MARGINS.right);
        const plotHeight = HEIGHT - MARGINS.top - MARGINS.bottom;
        const y = (value: number) => MARGINS.top + plotHeight - (value / top) * plotHeight;
        const band = plotWidth / Math.max(1, turns.length);
        const barWidth = Math.max(2, Math.min(48, band * 0.6));
        const stride = labelStride(turns.length, plotWidth);
        return (
          <>
            <ValueAxis
              ticks={ticks}
              scale={y}
              margins={MARGINS}
              width={width}
              format={formatTickCount}
              label="tokens"
            />
            {turns.map((turn, index) => {
              const x = MARGINS.left + band * index + (band - barWidth) / 2;
              const values = {
                uncached: Math.max(0, turn.prompt_tokens - turn.cached_tokens),
                cached: turn.cached_tokens,
                completion: turn.completion_tokens,
              };
              let base = 0;
              return (
                <g key={turn.turn_index} className="bar-group">
                  {SERIES.map((series) => {
                    const value = values[series.key];
                    const y0 = y(base);
                    base += value;
                    const y1 = y(base);
                    return value > 0 ? (
                      <rect
                        key={series.key}
                        className={series.className}
                        x={x}
                        y={y1}
                        width={barWidth}
                        height={Math.max(0, y0 - y1)}
                      >
                        <title>{`Turn ${turn.turn_index} · ${series.label}: ${formatInt(value)}`}</title>
                      </rect>
                    ) : null;
                  })}
                  {index % stride === 0 ? (
                    <text
                      className="axis-label"
                      x={x + barWidth / 2}
                      y={HEIGHT - MARGINS.bottom + 16}
                      textAnchor="middle"
                    >
                      {turn.turn_index}
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
