// One GET of /metrics as a scraper makes it, the body left as sent (gzip'd when asked for and
// given): its bytes on the wire. A connection of its own per scrape: a kept-alive one can be
// closed by the hub's idle timer while the last ~25 MB body is still being read.
import { get } from "node:http";

export interface WireScrape {
  readonly ms: number;
  /** Body bytes as sent. */
  readonly bytes: number;
  readonly encoding: string | undefined;
}

/** GET `url` with Accept-Encoding `acceptEncoding`: whole-body time (ms), bytes on the wire, Content-Encoding. */
export function wireGet(url: string, acceptEncoding: string): Promise<WireScrape> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers: { "accept-encoding": acceptEncoding } }, (res) => {
      let bytes = 0;
      res.on("data", (b: Buffer) => (bytes += b.length));
      res.on("end", () => (res.statusCode === 200 ? resolve({ ms: performance.now() - t0, bytes, encoding: res.headers["content-encoding"] }) : reject(new Error(`${url}: HTTP ${res.statusCode}`))));
      res.on("error", reject);
    }).on("error", reject);
  });
}
