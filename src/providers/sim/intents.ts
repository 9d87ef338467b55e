/**
 * Reads what a user message asks for, the way the simulated model "understands" it: searches
 * ("search for X", "look up X", "find X", with "top 3" / "limit 3") and tickets ("file a ticket
 * about Y", "open an urgent ticket for Y", with a priority). Heuristic by design, but deterministic
 * and tolerant of case, politeness and several requests in one message.
 */

export type TicketPriority = "low" | "normal" | "high";

export type Intent =
  | { kind: "search"; query: string; limit?: number }
  | { kind: "ticket"; title: string; priority?: TicketPriority };

export type IntentKind = Intent["kind"];

export interface IntentReading {
  /** In the order the user asked for them. */
  intents: Intent[];
  /** Requests recognised without a subject ("file a ticket"), which the model asks about. */
  unclear: IntentKind[];
}

const SEARCH_TRIGGER = String.raw`search(?:\s+(?:the\s+)?(?:web|internet|docs|documentation|knowledge\s*base|kb|wiki))?(?:\s+(?:for|about|on))?|look\s*up|look\s+for|find(?:\s+(?:me|us))?`;
const TICKET_TRIGGER = String.raw`(?:file|open|create|raise|submit|log|make|write|cut)\s+(?:(?!and\b|then\b)[a-z-]+\s+){0,4}?(?:ticket|issue)`;
const TRIGGERS = new RegExp(
  String.raw`\b(?:(?<search>${SEARCH_TRIGGER})|(?<ticket>${TICKET_TRIGGER}))\b`,
  "gi",
);

/** Text before a first request: it must start a clause ("Please search…", "can you find…"). */
const CLAUSE_START =
  /(?:^|[,;:.!?()\n"'“]|\b(?:please|pls|kindly|and|then|also|now|you|to|me|us|go|just|let's|lets|first|ok|okay|hey|hi|hello))\s*$/i;
/** Text between two requests: the second must be joined on ("…, then file a ticket"). */
const CONNECTOR =
  /(?:[,;.!?\n&]|\b(?:and|then|also|plus))\s*(?:(?:and|then|also|please|pls|kindly|you|go|could you|can you|would you|will you)\s+)*$/i;
const SENTENCE_END = /[.!?](?=\s|$)|\n/;

const NUMBER = String.raw`(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)`;
const NUMBER_WORDS = [
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
];
const LIMIT_PATTERNS = [
  new RegExp(
    String.raw`(?:\s*[,(]\s*|\s+|^)(?:the\s+)?(?:top|first)\s+${NUMBER}(?:\s+(?:results|hits|matches|items|documents|docs))?(?:\s+(?:for|about|on|of|matching))?\s*\)?`,
    "i",
  ),
  new RegExp(
    String.raw`(?:\s*[,(]\s*|\s+|^)(?:with\s+(?:a\s+)?)?limit(?:\s+(?:to|of)|\s*[=:])?\s*${NUMBER}(?:\s+(?:results|hits|matches|items))?\s*\)?`,
    "i",
  ),
  new RegExp(
    String.raw`(?:\s*[,(]\s*|\s+|^)(?:(?:only|just|at\s+most|max(?:imum)?)\s+)?${NUMBER}\s+(?:results|hits|matches)(?:\s+(?:for|about|on|of))?\s*\)?`,
    "i",
  ),
];

const SEARCH_FILLER =
  /^(?:(?:some|any)\s+)?(?:information|info|results|articles|docs|documents|anything|something|stuff|pages)\s+(?:about|on|for|regarding|related\s+to)\s+/i;
const TICKET_FILLER =
  /^(?:about|for|on|regarding|re:?|titled|called|named|saying|that\s+says|with\s+(?:the\s+)?title)\s+/i;

const PRIORITY_WORD = "(?:high|low|normal|medium)";
const EXPLICIT_PRIORITY = new RegExp(
  String.raw`\bpriority\s*(?:[:=]|of|is|to)?\s*(${PRIORITY_WORD})\b`,
  "i",
);
const LOW_PRIORITY = /\b(?:low[\s-]+prio(?:rity)?|not\s+urgent|no\s+rush)\b/i;
const HIGH_PRIORITY = /\b(?:urgent(?:ly)?|high[\s-]+prio(?:rity)?|asap|critical|emergency)\b/i;
const NORMAL_PRIORITY = /\b(?:normal|medium)[\s-]+prio(?:rity)?\b/i;
const TRAILING_PRIORITY = new RegExp(
  String.raw`(?:\s*[,;(\-–—]\s*|\s+)(?:(?:and\s+)?(?:mark|make|set)\s+it\s+(?:as\s+)?|(?:it'?s|it\s+is)\s+|with\s+(?:a\s+)?|as\s+)?(?:${PRIORITY_WORD}[\s-]+prio(?:rity)?|priority\s*(?:[:=]|of|is)?\s*${PRIORITY_WORD}|urgent(?:ly)?|asap|not\s+urgent|no\s+rush)\s*\)?$`,
  "i",
);
const LEADING_PRIORITY = new RegExp(
  String.raw`^(?:urgent(?:ly)?|asap|${PRIORITY_WORD}[\s-]+prio(?:rity)?)\s*[:,\-–—]\s*`,
  "i",
);

interface Trigger {
  kind: IntentKind;
  /** The matched trigger words ("open an urgent ticket"). */
  words: string;
  start: number;
  end: number;
}

export function readIntents(text: string): IntentReading {
  const triggers = findTriggers(text);
  const intents: Intent[] = [];
  const unclear: IntentKind[] = [];
  triggers.forEach((trigger, index) => {
    const next = triggers[index + 1];
    let segment = text.slice(trigger.end, next ? next.start : text.length);
    const sentenceEnd = SENTENCE_END.exec(segment);
    if (sentenceEnd) segment = segment.slice(0, sentenceEnd.index);
    const intent =
      trigger.kind === "search" ? readSearch(segment) : readTicket(trigger.words, segment);
    if (intent) intents.push(intent);
    else unclear.push(trigger.kind);
  });
  // "search for X and file a ticket" — a ticket about the search's subject.
  const subject = intents.find((intent) => intent.kind === "search");
  if (subject && unclear.includes("ticket")) {
    unclear.splice(unclear.indexOf("ticket"), 1);
    const priority = readPriority(text);
    intents.push({ kind: "ticket", title: subject.query, ...(priority ? { priority } : {}) });
  }
  return { intents, unclear };
}

function findTriggers(text: string): Trigger[] {
  const accepted: Trigger[] = [];
  for (const match of text.matchAll(TRIGGERS)) {
    const start = match.index;
    const previous = accepted.at(-1);
    const before = text.slice(previous ? previous.end : 0, start);
    const joined = previous ? CONNECTOR.test(before) : CLAUSE_START.test(before);
    if (!joined) continue;
    accepted.push({
      kind: match.groups?.search !== undefined ? "search" : "ticket",
      words: match[0],
      start,
      end: start + match[0].length,
    });
  }
  return accepted;
}

function readSearch(segment: string): Intent | null {
  let query = segment;
  let limit: number | undefined;
  for (const pattern of LIMIT_PATTERNS) {
    const match = pattern.exec(query);
    if (!match) continue;
    limit = toNumber(match[1] as string);
    query = `${query.slice(0, match.index)} ${query.slice(match.index + match[0].length)}`;
    break;
  }
  query = cleanSubject(query).replace(SEARCH_FILLER, "");
  query = cleanSubject(query);
  if (!query) return null;
  return {
    kind: "search",
    query,
    ...(limit !== undefined ? { limit: Math.min(10, Math.max(1, limit)) } : {}),
  };
}

function readTicket(words: string, segment: string): Intent | null {
  const priority = readPriority(`${words} ${segment}`);
  let title = cleanSubject(segment).replace(TICKET_FILLER, "");
  for (let previous = ""; previous !== title; ) {
    previous = title;
    title = cleanSubject(title.replace(TRAILING_PRIORITY, "").replace(LEADING_PRIORITY, ""));
  }
  if (!title) return null;
  return { kind: "ticket", title, ...(priority ? { priority } : {}) };
}

export function readPriority(text: string): TicketPriority | null {
  const explicit = EXPLICIT_PRIORITY.exec(text);
  if (explicit) {
    const word = (explicit[1] as string).toLowerCase();
    return word === "medium" ? "normal" : (word as TicketPriority);
  }
  if (LOW_PRIORITY.test(text)) return "low";
  if (HIGH_PRIORITY.test(text)) return "high";
  if (NORMAL_PRIORITY.test(text)) return "normal";
  return null;
}

/** Trims punctuation, dangling connectors, politeness and surrounding quotes. */
function cleanSubject(raw: string): string {
  let text = raw.replace(/\s+/g, " ");
  for (let previous = ""; previous !== text; ) {
    previous = text;
    text = text
      .trim()
      .replace(/^[\s:,\-–—]+/, "")
      .replace(/[\s,;:.!?]+$/, "")
      .replace(/\s+(?:and|then|also|plus|&)(?:\s+then)?$/i, "")
      .replace(/,?\s*\b(?:please|pls|for me|for us|thanks|thank you|right now)$/i, "");
    const quoted = /^["'“‘`](.*)["'”’`]$/.exec(text);
    if (quoted) text = quoted[1] as string;
  }
  return text;
}

function toNumber(word: string): number {
  const index = NUMBER_WORDS.indexOf(word.toLowerCase());
  return index >= 0 ? index + 1 : Number.parseInt(word, 10);
}
