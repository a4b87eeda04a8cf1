// The options `npm start` and `npm run web` share (PROTOCOL.md, "Headless hub": web mode takes the
// hub's options plus --no-demo). Parsed strictly: a typo is an error, not a silently ignored flag.
import { parseArgs } from "node:util";

export interface LaunchOptions {
  port: number;
  host: string;
  token: string | undefined;
  record: string | undefined;
  demo: boolean;
  /** `npm start` only: skip the Electron check and serve web mode. */
  web: boolean;
}

export const DEFAULT_PORT = 7420;

export function parseLaunchArgs(argv: readonly string[]): LaunchOptions {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      token: { type: "string" },
      record: { type: "string" },
      "no-demo": { type: "boolean" },
      web: { type: "boolean" },
    },
  });
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer from 0 to 65535, got ${values.port}`);
  return {
    port,
    host: values.host ?? "127.0.0.1",
    token: values.token ?? process.env.SEMSCOPE_TOKEN,
    record: values.record,
    demo: values["no-demo"] !== true,
    web: values.web === true,
  };
}
