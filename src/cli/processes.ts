/** Whether process `pid` exists on this host (signal 0 only asks): a process of another user's (EPERM) does. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
