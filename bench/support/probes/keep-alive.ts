// What every dependency probe does once its work is done: stay alive and idle, as the manager
// does, so the bench can read its memory.
export function stayIdle(): void {
  setInterval(() => undefined, 2 ** 30);
}
