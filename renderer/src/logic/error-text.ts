// What the page shows for a failure it caught: an Error's message, else the value as text.
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
