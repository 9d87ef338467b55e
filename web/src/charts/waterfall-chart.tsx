import { useId } from "react";
import type { CallKind } from "../api-types.js";
import { formatInt, formatMs, formatTickMs } from "../format.js";
import { KIND_LABELS, niceTicks, type WaterfallLayout } from "../metrics.js";
import { ChartFrame } from "./chart-frame.js";

const ROW_HEIGHT = 24;
const AXIS_HEIGHT = 28;
const BOTTOM = 28;

const KIND_CLASS: Record<CallKind, string> = {
  chat_completion: "series-chat",
  argument_fallback: "series-fallback",
  tool_execution: "series-tool",
};

interface WaterfallChartProps {
  layout: WaterfallLayout;
  turnIndexes: number[];
  turnIndex: number;
  onTurnChange: (turnIndex: number) => void;
}

/** Each call of one turn on a shared time axis: which work overlapped, and what waited on what. */
export function WaterfallChart({
  layout,
  turnIndexes,
  turnIndex,
  onTurnChange,
}: WaterfallChartProps) {
  const selectId = useId();
  const height = AXIS_HEIGHT + Math.max(1, layout.rows.length) * ROW_HEIGHT + BOTTOM;
  const ticks = niceTicks(layout.total_ms, 6);
  const top = ticks.at(-1) ?? 1;
  const description = layout.rows
    .map(
      (row) =>
        `${row.label} (${KIND_LABELS[row.kind]}) starts at ${formatMs(row.start_ms)} and takes ${formatMs(row.duration_ms)}.`,
    )
    .join(" ");
  const controls = (
    <div className="chart-controls">
      <label htmlFor={selectId}>Turn</label>
      <select
        id={selectId}
        data-testid="waterfall-turn"
        value={turnIndex}
        onChange={(event) => onTurnChange(Number(event.target.value))}
      >
        {turnIndexes.map((index) => (
          <option key={index} value={index}>
            Turn {index}
          </option>
        ))}
      </select>
    </div>
  );
  return (
    <ChartFrame
      testId="chart-waterfall"
      title={`Call waterfall, turn ${turnIndex}`}
      description={description || "No calls recorded for this turn."}
      legend={[
        { label: "Chat completion", className: "series-chat" },
        { label: "TTFT part of a chat completion", className: "series-chat-ttft" },
        { label: "Argument fallback", className: "series-fallback" },
        { label: "Tool execution", className: "series-tool" },
      ]}
      height={height}
      controls={controls}
    >
      {(width) => {
        const labelWidth = width < 520 ? 112 : 180;
        const valueRoom = 64;
        const plotLeft = labelWidth;
        const plotWidth = Math.max(20, width - labelWidth - valueRoom);
        const x = (ms: number) => plotLeft + (ms / top) * plotWidth;
        const plotBottom = AXIS_HEIGHT + layout.rows.length * ROW_HEIGHT;
        if (layout.rows.length === 0) {
          return (
            <text x={width / 2} y={height / 2} textAnchor="middle" className="chart-empty">
              No calls recorded for this turn.
            </text>
          );
        }
        return (
          <>
            <g className="axis axis-time">
              {ticks.map((tick) => (
                <g key={tick}>
                  <line
                    className="grid"
                    x1={x(tick)}
                    x2={x(tick)}
                    y1={AXIS_HEIGHT - 4}
                    y2={plotBottom}
                  />
                  <text x={x(tick)} y={AXIS_HEIGHT - 10} textAnchor="middle">
                    {formatTickMs(tick)}
                  </text>
                </g>
              ))}
              <text
                className="axis-title"
                x={plotLeft + plotWidth / 2}
                y={height - 8}
                textAnchor="middle"
              >
                time since the turn's first call started
              </text>
            </g>
            {layout.rows.map((row, index) => {
              const rowTop = AXIS_HEIGHT + index * ROW_HEIGHT;
              const barY = rowTop + 5;
              const barHeight = ROW_HEIGHT - 10;
              const x0 = x(row.start_ms);
              const barWidth = Math.max(2, x(row.start_ms + row.duration_ms) - x0);
              const ttftWidth =
                row.kind === "chat_completion" && row.ttft_ms !== null
                  ? Math.min(barWidth, (Math.min(row.ttft_ms, row.duration_ms) / top) * plotWidth)
                  : 0;
              const details = [
                `${row.label}: ${KIND_LABELS[row.kind]}`,
                `start ${formatMs(row.start_ms)}`,
                `duration ${formatMs(row.duration_ms)}`,
                row.ttft_ms !== null ? `TTFT ${formatMs(row.ttft_ms)}` : null,
                row.tokens > 0 ? `${formatInt(row.tokens)} tokens` : null,
                row.used_fallback ? "arguments from fallback" : null,
              ]
                .filter(Boolean)
                .join(" · ");
              return (
                <g key={row.key} className="waterfall-row">
                  <title>{details}</title>
                  {index % 2 === 0 ? (
                    <rect
                      className="row-stripe"
                      x={0}
                      y={rowTop}
                      width={width}
                      height={ROW_HEIGHT}
                    />
                  ) : null}
                  <text
                    className="row-label"
                    x={labelWidth - 8}
                    y={rowTop + ROW_HEIGHT / 2}
                    dy="0.32em"
                    textAnchor="end"
                  >
                    {truncate(row.label, labelWidth < 150 ? 16 : 26)}
                  </text>
                  <rect
                    className={KIND_CLASS[row.kind]}
                    x={x0}
                    y={barY}
                    width={barWidth}
                    height={barHeight}
                    rx={2}
                  />
                  {ttftWidth > 0 ? (
                    <rect
                      className="series-chat-ttft"
                      x={x0}
                      y={barY}
                      width={ttftWidth}
                      height={barHeight}
                      rx={2}
                    />
                  ) : null}
                  <text
                    className="row-value"
                    x={x0 + barWidth + 4}
                    y={rowTop + ROW_HEIGHT / 2}
                    dy="0.32em"
                  >
                    {formatMs(row.duration_ms)}
                  </text>
                </g>
              );
            })}
          </>
        );
      }}
    </ChartFrame>
  );
}

function truncate(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
