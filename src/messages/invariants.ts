// The history invariants (SPEC "Invariants"): validate reports, repair fixes.
export * from "./validate.ts";
export * from "./repair.ts";
