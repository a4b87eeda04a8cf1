// One click puts a snippet or a token on the clipboard, and says whether it did.
import { useEffect, useState } from "react";

type CopyState = "idle" | "copied" | "failed";

export function CopyButton({ text, label, testId }: { text: string; label: string; testId?: string }) {
  const [state, setState] = useState<CopyState>("idle");
  useEffect(() => {
    if (state === "idle") return;
    const t = setTimeout(() => setState("idle"), 2500);
    return () => clearTimeout(t);
  }, [state]);
  const copy = () => {
    // The clipboard API exists only in secure contexts (https, loopback): elsewhere the text stays selectable by hand.
    const write = navigator.clipboard?.writeText(text) ?? Promise.reject(new Error("no clipboard"));
    write.then(
      () => setState("copied"),
      () => setState("failed"),
    );
  };
  return (
    <button type="button" className="btn btn-xs copy-btn" onClick={copy} data-testid={testId} title={state === "failed" ? "This page may not write the clipboard: select the text and copy it" : undefined}>
      {state === "copied" ? "Copied" : state === "failed" ? "Copy blocked" : label}
    </button>
  );
}
