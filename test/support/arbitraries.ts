// fast-check arbitraries for message histories in the Anthropic Messages shape.
//
//   arbHistory(opts?)        VALID histories (validate() reports nothing for them)
//   arbBrokenHistory(opts?)  valid histories with random damage applied (for repair tests)
//
// Values are freshly built objects on every generation; tests may mutate them.
import fc from "fast-check";
import type {
  ContentBlock,
  ImageBlock,
  Message,
  TextBlock,
  ToolResultBlock,
  ToolResultContentBlock,
  ToolUseBlock,
} from "../../src/messages/types.ts";

/** Tool names used by the generators (mixed case on purpose). */
export const TOOL_NAMES = [
  "bash",
  "read_file",
  "grep",
  "glob",
  "write_file",
  "edit_file",
  "todo_write",
  "Read",
  "Bash",
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

export interface HistoryOptions {
  /** Minimum number of rounds (assistant + user pairs after the first user message). Default 1. */
  minRounds?: number;
  /** Maximum number of rounds. Default 60 (so a history can have up to 121+ messages). */
  maxRounds?: number;
  /** Probability that a given tool result is huge (30k–300k chars). Default 0.01. */
  hugeRate?: number;
  /**
   * How the history ends:
   * - "user" (default): a user message (a tool_result message or plain text), as before a request;
   * - "assistant": a final assistant reply without tool_use (valid);
   * - "any": either of the above;
   * - "tool_use": a trailing assistant message with unanswered tool_use blocks. NOT valid by
   *   default: validate() accepts it only with `allowTrailingToolUse`.
   */
  endWith?: "user" | "assistant" | "any" | "tool_use";
}

// ---------------------------------------------------------------------------------------------
// Leaves

/** Non-blank text (never empty, never whitespace-only). Mixes ASCII and full Unicode. */
export const arbText: fc.Arbitrary<string> = fc
  .oneof(
    { arbitrary: fc.string({ minLength: 1, maxLength: 60 }), weight: 4 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" }), weight: 1 },
  )
  .map((s) => (s.trim() === "" ? `${s}x` : s));

const arbBase64 = (max: number): fc.Arbitrary<string> =>
  fc.uint8Array({ minLength: 1, maxLength: max }).map((a) => Buffer.from(a).toString("base64"));

/** A small base64 image block. */
export const arbImage: fc.Arbitrary<ImageBlock> = fc
  .record({
    media_type: fc.constantFrom("image/png", "image/jpeg", "image/gif", "image/webp"),
    data: arbBase64(48),
  })
  .map(({ media_type, data }) => ({
    type: "image" as const,
    source: { type: "base64" as const, media_type, data },
  }));

const textBlock = (text: string): TextBlock => ({ type: "text", text });
const arbTextBlock: fc.Arbitrary<TextBlock> = arbText.map(textBlock);

/** Spec of a huge result: built cheaply by repeating one random line. */
const arbHugeSpec = fc.record({
  line: fc.string({ minLength: 1, maxLength: 80 }),
  size: fc.integer({ min: 30_000, max: 300_000 }),
  asBlocks: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
});

function hugeText(line: string, size: number): string {
  const unit = `${line}\n`;
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

/** Normal (not huge) tool_result content: string, "", [], or a block list with text/images. */
const arbNormalResultContent: fc.Arbitrary<string | ToolResultContentBlock[]> = fc.oneof(
  { arbitrary: fc.string({ minLength: 1, maxLength: 400 }), weight: 6 },
  { arbitrary: fc.constant(""), weight: 1 },
  { arbitrary: fc.constant([] as ToolResultContentBlock[]), weight: 1 },
  {
    arbitrary: fc.array(
      fc.oneof(
        { arbitrary: arbTextBlock as fc.Arbitrary<ToolResultContentBlock>, weight: 3 },
        { arbitrary: arbImage as fc.Arbitrary<ToolResultContentBlock>, weight: 1 },
      ),
      { minLength: 1, maxLength: 3 },
    ),
    weight: 2,
  },
);

function arbResultContent(hugeRate: number): fc.Arbitrary<string | ToolResultContentBlock[]> {
  const threshold = Math.round(Math.max(0, Math.min(1, hugeRate)) * 1_000_000);
  return fc
    .tuple(fc.integer({ min: 0, max: 999_999 }), arbNormalResultContent, arbHugeSpec)
    .map(([roll, normal, huge]) => {
      if (roll >= threshold) return normal;
      const text = hugeText(huge.line, huge.size);
      return huge.asBlocks ? [textBlock(text)] : text;
    });
}

function toolInput(name: ToolName, arg: string): Record<string, unknown> {
  switch (name) {
    case "bash":
    case "Bash":
      return { command: arg };
    case "read_file":
      return { path: arg };
    case "Read":
      return { file_path: arg };
    case "grep":
      return { pattern: arg, path: "." };
    case "glob":
      return { pattern: arg };
    case "write_file":
      return { path: "out.txt", content: arg };
    case "edit_file":
      return { path: "src/a.ts", old_string: arg, new_string: `${arg}!` };
    case "todo_write":
      return { todos: [{ content: arg, status: "pending" }] };
  }
}

// ---------------------------------------------------------------------------------------------
// Round specs (ids are assigned afterwards, sequentially, so they are unique)

interface CallSpec {
  name: ToolName;
  arg: string;
  content: string | ToolResultContentBlock[];
  isError: boolean;
  /** Omit the `content` field entirely when the result is empty (the API allows it). */
  omitEmpty: boolean;
}

type ThinkingSpec = { kind: "none" } | { kind: "thinking"; text: string; sig: string } | { kind: "redacted"; data: string };

interface ToolRoundSpec {
  kind: "tools";
  thinking: ThinkingSpec;
  preamble: string | null;
  calls: CallSpec[];
  reverseResults: boolean;
  /** Blocks the user adds after the results (an interjection, a screenshot). */
  extra: Array<TextBlock | ImageBlock>;
}

interface ChatRoundSpec {
  kind: "chat";
  thinking: ThinkingSpec;
  reply: string;
  user: UserTextSpec;
}

type RoundSpec = ToolRoundSpec | ChatRoundSpec;

type UserTextSpec = { asString: true; text: string } | { asString: false; blocks: Array<TextBlock | ImageBlock> };

const arbThinking: fc.Arbitrary<ThinkingSpec> = fc.oneof(
  { arbitrary: fc.constant({ kind: "none" as const }), weight: 5 },
  {
    arbitrary: fc.record({ kind: fc.constant("thinking" as const), text: arbText, sig: arbBase64(32) }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant("redacted" as const), data: arbBase64(40) }), weight: 1 },
);

const arbWeightedBool = (trueWeight: number, falseWeight: number): fc.Arbitrary<boolean> =>
  fc.oneof(
    { arbitrary: fc.constant(true), weight: trueWeight },
    { arbitrary: fc.constant(false), weight: falseWeight },
  );

function arbCall(hugeRate: number): fc.Arbitrary<CallSpec> {
  return fc.record({
    name: fc.constantFrom(...TOOL_NAMES),
    arg: arbText,
    content: arbResultContent(hugeRate),
    isError: arbWeightedBool(1, 6),
    omitEmpty: arbWeightedBool(1, 3),
  });
}

const arbUserText: fc.Arbitrary<UserTextSpec> = fc.oneof(
  { arbitrary: fc.record({ asString: fc.constant(true as const), text: arbText }), weight: 3 },
  {
    arbitrary: fc.record({
      asString: fc.constant(false as const),
      blocks: fc
        .tuple(arbTextBlock, fc.option(arbImage, { nil: undefined }), fc.boolean())
        .map(([t, img, imageFirst]) => (img ? (imageFirst ? [img, t] : [t, img]) : [t])),
    }),
    weight: 1,
  },
);

function arbToolRound(hugeRate: number): fc.Arbitrary<ToolRoundSpec> {
  return fc.record({
    kind: fc.constant("tools" as const),
    thinking: arbThinking,
    preamble: fc.option(arbText, { nil: null, freq: 2 }),
    calls: fc.array(arbCall(hugeRate), { minLength: 1, maxLength: 4 }),
    reverseResults: arbWeightedBool(1, 4),
    extra: fc.oneof(
      { arbitrary: fc.constant([] as Array<TextBlock | ImageBlock>), weight: 8 },
      { arbitrary: arbTextBlock.map((b) => [b] as Array<TextBlock | ImageBlock>), weight: 1 },
      { arbitrary: arbImage.map((b) => [b] as Array<TextBlock | ImageBlock>), weight: 1 },
    ),
  });
}

const arbChatRound: fc.Arbitrary<ChatRoundSpec> = fc.record({
  kind: fc.constant("chat" as const),
  thinking: arbThinking,
  reply: arbText,
  user: arbUserText,
});

function arbRound(hugeRate: number): fc.Arbitrary<RoundSpec> {
  return fc.oneof(
    { arbitrary: arbToolRound(hugeRate) as fc.Arbitrary<RoundSpec>, weight: 4 },
    { arbitrary: arbChatRound as fc.Arbitrary<RoundSpec>, weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// Assembly

function thinkingBlocks(t: ThinkingSpec): ContentBlock[] {
  if (t.kind === "thinking") return [{ type: "thinking", thinking: t.text, signature: t.sig }];
  if (t.kind === "redacted") return [{ type: "redacted_thinking", data: t.data }];
  return [];
}

function userTextMessage(u: UserTextSpec): Message {
  return u.asString
    ? { role: "user", content: u.text }
    : { role: "user", content: u.blocks.map((b) => ({ ...b })) };
}

function build(
  idBase: string,
  first: UserTextSpec,
  rounds: RoundSpec[],
  tail: { kind: "none" } | { kind: "reply"; round: ChatRoundSpec } | { kind: "tool_use"; round: ToolRoundSpec },
): Message[] {
  let next = 0;
  const newId = () => `toolu_${idBase}${(next++).toString().padStart(4, "0")}`;
  const assistantForTools = (r: ToolRoundSpec): { msg: Message; uses: ToolUseBlock[] } => {
    const uses: ToolUseBlock[] = r.calls.map((c) => ({
      type: "tool_use",
      id: newId(),
      name: c.name,
      input: toolInput(c.name, c.arg),
    }));
    const content: ContentBlock[] = [
      ...thinkingBlocks(r.thinking),
      ...(r.preamble !== null ? [textBlock(r.preamble)] : []),
      ...uses,
    ];
    return { msg: { role: "assistant", content }, uses };
  };

  const out: Message[] = [userTextMessage(first)];
  for (const r of rounds) {
    if (r.kind === "chat") {
      out.push({ role: "assistant", content: [...thinkingBlocks(r.thinking), textBlock(r.reply)] });
      out.push(userTextMessage(r.user));
      continue;
    }
    const { msg, uses } = assistantForTools(r);
    out.push(msg);
    const results: ToolResultBlock[] = r.calls.map((c, i) => {
      const block: ToolResultBlock = { type: "tool_result", tool_use_id: uses[i]!.id };
      const empty = c.content === "" || (Array.isArray(c.content) && c.content.length === 0);
      if (!(empty && c.omitEmpty)) block.content = c.content;
      if (c.isError) block.is_error = true;
      return block;
    });
    if (r.reverseResults) results.reverse();
    out.push({ role: "user", content: [...results, ...r.extra.map((b) => ({ ...b }))] });
  }
  if (tail.kind === "reply") {
    out.push({
      role: "assistant",
      content: [...thinkingBlocks(tail.round.thinking), textBlock(tail.round.reply)],
    });
  } else if (tail.kind === "tool_use") {
    out.push(assistantForTools(tail.round).msg);
  }
  return out;
}

/**
 * Valid random histories: first message user, roles alternate, every tool_use answered by
 * tool_result blocks (first in the block list) in the next user message, unique ids, no empty
 * content, no blank text blocks. See HistoryOptions for `endWith`.
 */
export function arbHistory(opts: HistoryOptions = {}): fc.Arbitrary<Message[]> {
  const minRounds = opts.minRounds ?? 1;
  const maxRounds = Math.max(minRounds, opts.maxRounds ?? 60);
  const hugeRate = opts.hugeRate ?? 0.01;
  const endWith = opts.endWith ?? "user";
  const tailArb =
    endWith === "user"
      ? fc.constant({ kind: "none" as const })
      : endWith === "assistant"
        ? arbChatRound.map((round) => ({ kind: "reply" as const, round }))
        : endWith === "any"
          ? fc.oneof(
              fc.constant({ kind: "none" as const }),
              arbChatRound.map((round) => ({ kind: "reply" as const, round })),
            )
          : arbToolRound(hugeRate).map((round) => ({ kind: "tool_use" as const, round }));
  return fc
    .tuple(
      fc.stringMatching(/^[0-9A-Za-z]{6}$/),
      arbUserText,
      // Mostly short histories; a third use the whole [minRounds, maxRounds] range (fast-check's
      // default size alone would cap the length at ~10 rounds and none would exceed 50 messages).
      fc.oneof(
        { arbitrary: fc.array(arbRound(hugeRate), { minLength: minRounds, maxLength: maxRounds, size: "small" }), weight: 2 },
        { arbitrary: fc.array(arbRound(hugeRate), { minLength: minRounds, maxLength: maxRounds, size: "max" }), weight: 1 },
      ),
      tailArb as fc.Arbitrary<
        { kind: "none" } | { kind: "reply"; round: ChatRoundSpec } | { kind: "tool_use"; round: ToolRoundSpec }
      >,
    )
    .map(([idBase, first, rounds, tail]) => build(idBase, first, rounds, tail));
}

// ---------------------------------------------------------------------------------------------
// Damage

export const DAMAGE_KINDS = [
  "drop_tool_result",
  "drop_tool_use",
  "swap_messages",
  "duplicate_role_split",
  "duplicate_role_copy",
  "empty_content",
  "insert_empty_message",
  "add_empty_text_block",
  "first_assistant_drop_first",
  "first_assistant_prepend",
  "tool_result_not_first",
  "orphan_result_id",
  "orphan_result_extra",
  "duplicate_tool_use_id",
  "tool_use_in_user",
  "tool_result_in_assistant",
  "trailing_tool_use",
  "drop_message",
] as const;

export type DamageKind = (typeof DAMAGE_KINDS)[number];

export interface Damage {
  kind: DamageKind;
  /** Random selectors, reduced modulo the number of candidates. */
  a: number;
  b: number;
}

export const arbDamage: fc.Arbitrary<Damage> = fc.record({
  kind: fc.constantFrom(...DAMAGE_KINDS),
  a: fc.nat(),
  b: fc.nat(),
});

function copyHistory(h: readonly Message[]): Message[] {
  return h.map((m) => ({
    ...m,
    content: typeof m.content === "string" ? m.content : m.content.map((b) => ({ ...b })),
  }));
}

const blocksMut = (m: Message): ContentBlock[] => {
  if (typeof m.content === "string") m.content = m.content === "" ? [] : [textBlock(m.content)];
  return m.content as ContentBlock[];
};

function pick<T>(xs: readonly T[], n: number): T | undefined {
  return xs.length === 0 ? undefined : xs[n % xs.length];
}

function indicesWhere(h: readonly Message[], f: (m: Message) => boolean): number[] {
  const r: number[] = [];
  h.forEach((m, i) => {
    if (f(m)) r.push(i);
  });
  return r;
}

const hasBlock = (m: Message, type: ContentBlock["type"]) =>
  typeof m.content !== "string" && m.content.some((b) => b.type === type);

/** Apply one damage to a history (in place; pass a copy). Exposed for targeted tests. */
export function applyDamage(h: Message[], d: Damage): void {
  let orphanSeq = 0;
  switch (d.kind) {
    case "drop_tool_result": {
      const i = pick(indicesWhere(h, (m) => m.role === "user" && hasBlock(m, "tool_result")), d.a);
      if (i === undefined) return;
      const bs = blocksMut(h[i]!);
      const idx = pick(
        bs.flatMap((b, k) => (b.type === "tool_result" ? [k] : [])),
        d.b,
      )!;
      bs.splice(idx, 1);
      return;
    }
    case "drop_tool_use": {
      const i = pick(indicesWhere(h, (m) => m.role === "assistant" && hasBlock(m, "tool_use")), d.a);
      if (i === undefined) return;
      const bs = blocksMut(h[i]!);
      const idx = pick(
        bs.flatMap((b, k) => (b.type === "tool_use" ? [k] : [])),
        d.b,
      )!;
      bs.splice(idx, 1);
      return;
    }
    case "swap_messages": {
      if (h.length < 2) return;
      const i = d.a % h.length;
      const j = d.b % h.length;
      const t = h[i]!;
      h[i] = h[j]!;
      h[j] = t;
      return;
    }
    case "duplicate_role_split": {
      const i = pick(
        indicesWhere(h, (m) => typeof m.content !== "string" && m.content.length >= 2),
        d.a,
      );
      if (i === undefined) return;
      const bs = blocksMut(h[i]!);
      const at = 1 + (d.b % (bs.length - 1));
      const tail = bs.splice(at);
      h.splice(i + 1, 0, { role: h[i]!.role, content: tail });
      return;
    }
    case "duplicate_role_copy": {
      if (h.length === 0) return;
      const i = d.a % h.length;
      h.splice(i + 1, 0, copyHistory([h[i]!])[0]!);
      return;
    }
    case "empty_content": {
      if (h.length === 0) return;
      const i = d.a % h.length;
      const forms: Array<Message["content"]> = ["", [], [textBlock("")], [textBlock("  \n")], " "];
      h[i]!.content = forms[d.b % forms.length]!;
      return;
    }
    case "insert_empty_message": {
      const i = d.a % (h.length + 1);
      const forms: Array<Message["content"]> = ["", [], [textBlock("")]];
      h.splice(i, 0, { role: d.b % 2 === 0 ? "user" : "assistant", content: forms[d.b % 3]! });
      return;
    }
    case "add_empty_text_block": {
      if (h.length === 0) return;
      const i = d.a % h.length;
      const bs = blocksMut(h[i]!);
      bs.splice(d.b % (bs.length + 1), 0, textBlock(d.b % 2 === 0 ? "" : " "));
      return;
    }
    case "first_assistant_drop_first": {
      if (h.length > 1) h.shift();
      return;
    }
    case "first_assistant_prepend": {
      h.unshift({ role: "assistant", content: [textBlock(`assistant opener ${d.a % 1000}`)] });
      return;
    }
    case "tool_result_not_first": {
      const i = pick(indicesWhere(h, (m) => m.role === "user" && hasBlock(m, "tool_result")), d.a);
      if (i === undefined) return;
      const bs = blocksMut(h[i]!);
      const nonResult = bs.findIndex((b) => b.type !== "tool_result");
      if (nonResult >= 0 && d.b % 2 === 0) {
        const [b] = bs.splice(nonResult, 1);
        bs.unshift(b!);
      } else {
        bs.unshift(textBlock(`interjection ${d.b % 1000}`));
      }
      return;
    }
    case "orphan_result_id": {
      const i = pick(indicesWhere(h, (m) => m.role === "user" && hasBlock(m, "tool_result")), d.a);
      if (i === undefined) return;
      const bs = blocksMut(h[i]!);
      const idx = pick(
        bs.flatMap((b, k) => (b.type === "tool_result" ? [k] : [])),
        d.b,
      )!;
      bs[idx] = { ...(bs[idx] as ToolResultBlock), tool_use_id: `toolu_orphan_${d.b}_${orphanSeq++}` };
      return;
    }
    case "orphan_result_extra": {
      if (h.length === 0) return;
      const i = d.a % h.length;
      const bs = blocksMut(h[i]!);
      bs.unshift({
        type: "tool_result",
        tool_use_id: `toolu_orphan_x${d.b}`,
        content: `orphan output ${d.b % 1000}`,
      });
      return;
    }
    case "duplicate_tool_use_id": {
      const uses: ToolUseBlock[] = [];
      for (const m of h) if (typeof m.content !== "string") for (const b of m.content) if (b.type === "tool_use") uses.push(b);
      if (uses.length < 2) return;
      const src = uses[d.a % uses.length]!;
      const dst = uses[d.b % uses.length]!;
      dst.id = src.id; // blocks are copies (see copyHistory), mutation is local
      return;
    }
    case "tool_use_in_user": {
      const i = pick(indicesWhere(h, (m) => m.role === "user"), d.a);
      if (i === undefined) return;
      blocksMut(h[i]!).push({
        type: "tool_use",
        id: `toolu_misplaced_${d.b}`,
        name: "bash",
        input: { command: "ls" },
      });
      return;
    }
    case "tool_result_in_assistant": {
      const i = pick(indicesWhere(h, (m) => m.role === "assistant"), d.a);
      if (i === undefined) return;
      const bs = blocksMut(h[i]!);
      const use = bs.find((b): b is ToolUseBlock => b.type === "tool_use");
      bs.push({
        type: "tool_result",
        tool_use_id: use && d.b % 2 === 0 ? use.id : `toolu_stray_${d.b}`,
        content: "misplaced output",
      });
      return;
    }
    case "trailing_tool_use": {
      h.push({
        role: "assistant",
        content: [
          textBlock("let me check"),
          { type: "tool_use", id: `toolu_trailing_${d.a}`, name: "grep", input: { pattern: "x" } },
        ],
      });
      return;
    }
    case "drop_message": {
      if (h.length > 1) h.splice(d.a % h.length, 1);
      return;
    }
  }
}

export interface BrokenHistoryOptions extends HistoryOptions {
  /** Maximum number of damages applied (at least one). Default 4. */
  maxDamages?: number;
}

/** A valid history with 1..maxDamages random damages applied (the result may happen to be valid). */
export function arbBrokenHistory(opts: BrokenHistoryOptions = {}): fc.Arbitrary<Message[]> {
  return arbBrokenHistoryWithDamages(opts).map(({ history }) => history);
}

/** Same as arbBrokenHistory, also returning the damages applied (for failure reports). */
export function arbBrokenHistoryWithDamages(
  opts: BrokenHistoryOptions = {},
): fc.Arbitrary<{ history: Message[]; damages: Damage[] }> {
  const { maxDamages = 4, ...hopts } = opts;
  return fc
    .tuple(
      arbHistory({ maxRounds: 20, ...hopts }),
      fc.array(arbDamage, { minLength: 1, maxLength: Math.max(1, maxDamages) }),
    )
    .map(([valid, damages]) => {
      const h = copyHistory(valid);
      for (const d of damages) applyDamage(h, d);
      return { history: h, damages };
    });
}
