import { isIP } from "node:net";

/** True when the URL's host is this machine by address or by the name `localhost`. */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) {
    if (host === "::1") return true;
    // An IPv4-mapped loopback address (::ffff:127.0.0.1, which URL writes as ::ffff:7f00:1).
    const mapped = /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.exec(host);
    return mapped !== null;
  }
  return false;
}
