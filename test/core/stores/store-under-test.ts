/** A store under a contract test, and a way to move its clock (real stores shift their keys' expiry instead). */
export interface StoreUnderTest<Store> {
  store: Store;
  advance(ms: number): Promise<void>;
}

/** How a contract gets a fresh store for each test. */
export type MakeStore<Store> = () => StoreUnderTest<Store> | Promise<StoreUnderTest<Store>>;
