// The subset of Rust's `humantime::parse_duration` the portal checks before the server does:
// one or more `<integer><unit>` groups (`90m`, `1h 30m`). Returns seconds, or null.
const UNITS: Record<string, number> = {
  ns: 1e-9,
  nsec: 1e-9,
  us: 1e-6,
  usec: 1e-6,
  ms: 1e-3,
  msec: 1e-3,
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  m: 60,
  min: 60,
  mins: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hr: 3600,
  hrs: 3600,
  hour: 3600,
  hours: 3600,
  d: 86400,
  day: 86400,
  days: 86400,
  w: 604800,
  week: 604800,
  weeks: 604800,
  M: 2630016,
  month: 2630016,
  months: 2630016,
  y: 31557600,
  year: 31557600,
  years: 31557600,
};

export function parseDuration(text: string): number | null {
  const s = text.trim();
  if (s === '') return null;
  const re = /(\d+)\s*([a-zA-Z]+)\s*/y;
  let total = 0;
  let pos = 0;
  while (pos < s.length) {
    re.lastIndex = pos;
    const m = re.exec(s);
    if (!m) return null;
    const unit = UNITS[m[2] ?? ''];
    if (unit === undefined) return null;
    total += Number(m[1]) * unit;
    pos = re.lastIndex;
  }
  return total;
}

/** Whole seconds as `humantime::format_duration` writes them (`1d 2h`, `90m` as `1h 30m`). */
export function formatDuration(seconds: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, Math.floor(seconds));
  for (const [unit, size] of [
    ['d', 86400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.length ? parts.join(' ') : '0s';
}
