/**
 * The sessions list's search and filters as they live in the page's URL (`/?q=…&mode=…`), so a
 * filtered list can be reloaded, shared and navigated back to. Values pass through unchanged: the
 * server validates them and its error names a bad one. Pure, tested without a browser.
 */

export const SESSION_FILTER_KEYS = [
  "q",
  "mode",
  "model",
  "tag",
  "status",
  "experiment",
  "updated_from",
  "updated_to",
  "include",
] as const;

export type SessionFilterKey = (typeof SESSION_FILTER_KEYS)[number];

/** The filters in force, as the text of their query parameters; an absent one filters nothing. */
export type SessionFilters = Partial<Record<SessionFilterKey, string>>;

/**
 * `include=experiments` lists experiment runs too; the server hides them by default (one bench run
 * would flood the list). An `experiment` filter shows that experiment's runs either way.
 */
export const INCLUDE_EXPERIMENTS = "experiments";

export const showsExperimentRuns = (filters: SessionFilters): boolean =>
  filters.include === INCLUDE_EXPERIMENTS || filters.experiment !== undefined;

/** The turn statuses a session can be filtered by ("none": no turn yet). */
export const SESSION_STATUSES = [
  "running",
  "completed",
  "cancelled",
  "failed",
  "max_rounds",
  "interrupted",
  "none",
] as const;

const isFilterKey = (name: string): name is SessionFilterKey =>
  (SESSION_FILTER_KEYS as readonly string[]).includes(name);

/** The filters a location's query string asks for; other parameters are not filters. */
export function filtersFromSearch(search: string): SessionFilters {
  const params = new URLSearchParams(search);
  const filters: SessionFilters = {};
  for (const [name, value] of params) {
    if (isFilterKey(name) && value.trim() !== "") filters[name] = value;
  }
  return filters;
}

/** The query string (with its `?`, or "" for none) that keeps `filters`, in a fixed order. */
export function searchFromFilters(filters: SessionFilters): string {
  const params = new URLSearchParams();
  for (const name of SESSION_FILTER_KEYS) {
    const value = filters[name];
    if (value !== undefined && value.trim() !== "") params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** `filters` with `name` set to `value` ("" removes it). */
export function withFilter(
  filters: SessionFilters,
  name: SessionFilterKey,
  value: string,
): SessionFilters {
  const next = { ...filters };
  if (value.trim() === "") delete next[name];
  else next[name] = value;
  return next;
}

export const hasFilters = (filters: SessionFilters): boolean =>
  SESSION_FILTER_KEYS.some((name) => filters[name] !== undefined);

/**
 * A date picked in the list's date fields as the bound the API takes: the first (`from`) or the
 * last millisecond (`to`) of that day where the browser is, with its offset. The table shows local
 * times, and a bare date would be the UTC day (a day's evening sessions missing from "to" west of
 * Greenwich). The instants are the browser's own: on a day whose clock jumps at midnight the day
 * starts at 01:00, and a day that repeats its last hour ends in the second one.
 */
export function localDayBound(date: string, edge: "from" | "to"): string {
  const [year, month, day] = date.split("-").map(Number);
  if (year === undefined || month === undefined || day === undefined) return date;
  const at = new Date(0);
  // setFullYear, not the constructor: it would read years 0-99 as 1900-1999.
  at.setFullYear(year, month - 1, edge === "from" ? day : day + 1);
  at.setHours(0, 0, 0, 0);
  if (edge === "to") at.setTime(at.getTime() - 1);
  if (Number.isNaN(at.getTime())) return date;
  // Before standard time a zone's offset was the place's mean solar time, in seconds (Los
  // Angeles: -7:52:58), which no ISO offset writes. The offset is then rounded to a minute away
  // from the day's edge and the clock time moved with it, so the instant is the same one and the
  // time stays inside the day (`from` a few seconds after midnight, `to` before its end).
  const exact = (wallClock(at) - at.getTime()) / 60_000;
  const minutes = edge === "from" ? Math.ceil(exact) : Math.floor(exact);
  const local = new Date(at.getTime() + minutes * 60_000);
  const sign = minutes < 0 ? "-" : "+";
  const abs = Math.abs(minutes);
  const zone = `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  const time = `${pad(local.getUTCHours())}:${pad(local.getUTCMinutes())}:${pad(local.getUTCSeconds())}.${String(local.getUTCMilliseconds()).padStart(3, "0")}`;
  return `${date}T${time}${zone}`;
}

const pad = (value: number) => String(value).padStart(2, "0");

/**
 * The local clock reading of `at` as if it were UTC: its difference from `at` is the offset to
 * the second (getTimezoneOffset is whole minutes in some engines, and fractional in others).
 */
function wallClock(at: Date): number {
  const wall = new Date(0);
  wall.setUTCFullYear(at.getFullYear(), at.getMonth(), at.getDate());
  wall.setUTCHours(at.getHours(), at.getMinutes(), at.getSeconds(), at.getMilliseconds());
  return wall.getTime();
}
