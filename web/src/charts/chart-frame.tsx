import { type ReactNode, useId, useLayoutEffect, useRef, useState } from "react";

/** The width of a container, following it as the window resizes (charts draw at real pixels). */
export function useMeasuredWidth<T extends HTMLElement>(fallback = 640) {
  const ref = useRef<T | null>(null);
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    if (element.clientWidth > 0) setWidth(element.clientWidth);
    if (typeof ResizeObserver === "undefined") return;
    const observer = new ResizeObserver((entries) => {
      const measured = entries[0]?.contentRect.width;
      if (measured && measured > 0) setWidth(Math.floor(measured));
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return [ref, width] as const;
}

export interface LegendItem {
  label: string;
  className: string;
}

export function Legend({ items }: { items: LegendItem[] }) {
  return (
    <ul className="legend" aria-label="Legend">
      {items.map((item) => (
        <li key={item.label}>
          <span className={`legend-swatch ${item.className}`} aria-hidden="true" />
          {item.label}
        </li>
      ))}
    </ul>
  );
}

interface ChartFrameProps {
  testId: string;
  title: string;
  description: string;
  legend?: LegendItem[];
  height: number;
  children: (width: number) => ReactNode;
  /** Controls above the chart (e.g. the waterfall's turn picker). */
  controls?: ReactNode;
}

/** A figure with a heading, a legend and an accessible SVG sized to its container. */
export function ChartFrame({
  testId,
  title,
  description,
  legend,
  height,
  children,
  controls,
}: ChartFrameProps) {
  const [ref, width] = useMeasuredWidth<HTMLDivElement>();
  const titleId = useId();
  const descriptionId = useId();
  return (
    <figure className="chart" data-testid={testId}>
      <figcaption className="chart-head">
        <h3 className="chart-title">{title}</h3>
        {controls}
      </figcaption>
      {legend ? <Legend items={legend} /> : null}
      <div ref={ref} className="chart-canvas">
        <svg
          width={width}
          height={height}
          viewBox={`0 0 ${width} ${height}`}
          role="img"
          aria-labelledby={`${titleId} ${descriptionId}`}
        >
          <title id={titleId}>{title}</title>
          <desc id={descriptionId}>{description}</desc>
          {children(width)}
        </svg>
      </div>
    </figure>
  );
}

export interface Margins {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/** A vertical value axis with grid lines, tick labels and a rotated axis title. */
export function ValueAxis({
  ticks,
  scale,
  margins,
  width,
  format,
  label,
}: {
  ticks: number[];
  scale: (value: number) => number;
  margins: Margins;
  width: number;
  format: (value: number) => string;
  label: string;
}) {
  const plotTop = margins.top;
  const plotBottom = scale(0);
  return (
    <g className="axis axis-value">
      {ticks.map((tick) => (
        <g key={tick}>
          <line
            className="grid"
            x1={margins.left}
            x2={width - margins.right}
            y1={scale(tick)}
            y2={scale(tick)}
          />
          <text x={margins.left - 6} y={scale(tick)} dy="0.32em" textAnchor="end">
            {format(tick)}
          </text>
        </g>
      ))}
      <text
        className="axis-title"
        transform={`translate(12 ${(plotTop + plotBottom) / 2}) rotate(-90)`}
        textAnchor="middle"
      >
        {label}
      </text>
    </g>
  );
}

/** Every nth category label when there are more than fit (about 28 px each). */
export function labelStride(count: number, plotWidth: number): number {
  return Math.max(1, Math.ceil(count / Math.max(1, Math.floor(plotWidth / 28))));
}
