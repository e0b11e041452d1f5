import fc from "fast-check";
import { test } from "node:test";
