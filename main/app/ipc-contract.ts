// Main's half of the IPC contract (shared/ipc/ipc-contract.ts has the names and types): who may
// call each channel and what its arguments must look like. ipc-main.ts applies it to every call
// before a handler runs; nothing here knows Electron.
import { z } from "zod";
import type { InvokeChannel, IpcInvokeMap } from "../../shared/ipc/ipc-contract.js";
import { originOf } from "./origin.js";
import type { TrustedOrigin } from "./navigation-policy.js";

/** "dashboard": any page of the hub the window shows; "local": only the in-process hub's pages. */
export type Access = "local" | "dashboard";

interface ChannelPolicy {
  readonly access: Access;
  /** The argument list as zod sees it; content rules the handler reports itself (settings:save). */
  readonly args: z.ZodType<unknown[]>;
}

// A remote hub's page must not read the local token or other hubs' tokens, nor change settings.
export const INVOKE_POLICY: { readonly [C in InvokeChannel]: ChannelPolicy } = {
  "settings:get": { access: "local", args: z.tuple([]) },
  // The content is checked by the settings schema, whose message goes back as { ok: false }.
  "settings:save": { access: "local", args: z.tuple([z.unknown()]) },
  "connection:get": { access: "dashboard", args: z.tuple([]) },
  "token:regenerate": { access: "local", args: z.tuple([]) },
};

/** What main can tell about the sender of one invoke. */
export interface SenderInfo {
  /** The sending frame's URL, null when the frame is gone (navigated away or destroyed). */
  readonly frameUrl: string | null;
  readonly isMainFrame: boolean;
  /** The sender is the dashboard window's webContents (not another window, not a webview). */
  readonly fromDashboardWindow: boolean;
}

export type InvokeVerdict<C extends InvokeChannel> = { ok: true; args: IpcInvokeMap[C]["args"] } | { ok: false; reason: string };

export function isInvokeChannel(channel: string): channel is InvokeChannel {
  return Object.hasOwn(INVOKE_POLICY, channel);
}

/** Why `sender` may not call `channel`, or null when it may. */
export function senderProblem(channel: InvokeChannel, sender: SenderInfo, trusted: TrustedOrigin | null): string | null {
  if (trusted === null) return "no dashboard is loaded";
  if (!sender.fromDashboardWindow) return "the sender is not the dashboard window";
  if (sender.frameUrl === null) return "the sending frame is gone";
  if (!sender.isMainFrame) return "the sender is a subframe";
  const origin = originOf(sender.frameUrl);
  if (origin !== trusted.origin) return `the sender's origin ${origin ?? "(none)"} is not the dashboard's ${trusted.origin}`;
  if (INVOKE_POLICY[channel].access === "local" && !trusted.local) return `${channel} is only for the local hub's dashboard`;
  return null;
}

/** The whole check for one invoke: channel, sender, then the argument list. */
export function checkInvoke<C extends InvokeChannel>(channel: C, sender: SenderInfo, trusted: TrustedOrigin | null, args: unknown[]): InvokeVerdict<C> {
  const problem = senderProblem(channel, sender, trusted);
  if (problem !== null) return { ok: false, reason: `${channel} refused: ${problem}` };
  const parsed = INVOKE_POLICY[channel].args.safeParse(args);
  if (!parsed.success) return { ok: false, reason: `${channel} refused: bad arguments (${parsed.error.issues[0]?.message ?? "invalid"})` };
  return { ok: true, args: parsed.data as IpcInvokeMap[C]["args"] };
}
