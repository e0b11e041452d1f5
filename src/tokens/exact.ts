// PROVISIONAL: replaced by the chunked o200k counter.
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
export function countTokens(text: string): number {
  return o200k(text);
}
