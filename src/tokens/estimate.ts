// PROVISIONAL: replaced by the calibrated character-class estimator.
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
