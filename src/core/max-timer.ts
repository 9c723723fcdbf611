/** The longest delay setTimeout honours (2^31 − 1 ms, about 24.8 days): past it, Node fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
