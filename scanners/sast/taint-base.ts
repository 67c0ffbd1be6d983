// The engine's state and what every part of it needs: the file's model, source lines, path steps.
// The engine is one class built in layers, one module per part, each extending the one before:
// base → variables → reporting → guards → bindings → closures → summaries → frameworks →
// functions → statements → expressions → TaintEngine (taint.ts). A part that calls one further
// up declares that method abstract. State that several parts share lives here; a part's own
// state lives in its layer.
import type ts from 'typescript';
import type { AliasMap } from './aliases.ts';
import { FileModel } from './project.ts';
import type { TaintRules } from './rules.ts';
import { joinSteps, newCallContext, type CallContext, type SummaryHit, type Taint, type TaintHit, type Vars } from './taint-values.ts';

export abstract class TaintEngineBase {
  protected vars: Vars = new Map();
  protected consts = new Map<string, string>();
  protected readonly outer: Array<{ vars: Vars; consts: Map<string, string> }> = [];
  protected fn = '<module>';
  protected loopDepth = 0;
  protected readonly hits: TaintHit[] = [];
  protected readonly seen = new Set<string>();
  protected readonly file: string;
  protected readonly ctx: CallContext;
  protected fileModel: FileModel | undefined;
  /** Set while summarising a function (taint-summaries.ts): its parameter → sink flows. */
  protected summaryHits: SummaryHit[] | undefined;

  constructor(
    protected readonly sf: ts.SourceFile,
    protected readonly rules: TaintRules,
    protected readonly aliases: AliasMap,
    /** Rules the prefilter left active for this file. */
    protected readonly active: bigint,
    /**
     * Called with every node pattern rules look at, and the name of the function it is in, so the
     * pattern rules need no walk of their own (nodes in loops may come twice).
     */
    protected visitor?: (node: ts.Node, fn: string) => void,
    /** Summaries and the project's modules; a context of its own (this file only) by default. */
    ctx?: CallContext,
    model?: FileModel,
    /** How many summaries are being computed around this one. */
    protected readonly depth = 0,
  ) {
    this.ctx = ctx ?? newCallContext();
    this.fileModel = model;
    this.file = model?.path ?? sf.fileName;
  }

  run(): TaintHit[] {
    this.statements(this.sf.statements);
    return this.hits;
  }

  protected get model(): FileModel {
    if (!this.fileModel) {
      this.fileModel = new FileModel(this.file, this.sf, this.aliases);
      this.ctx.project?.adopt(this.fileModel);
    }
    return this.fileModel;
  }

  protected lineOf(node: ts.Node): number {
    return this.sf.getLineAndCharacterOfPosition(node.getStart(this.sf)).line + 1;
  }

  /** A hop worth showing on the path: an assignment into a variable, a return. */
  protected hop(t: Taint | undefined, node: ts.Node, note: string): Taint | undefined {
    if (!t) return t;
    const line = this.lineOf(node);
    const last = t.steps?.[t.steps.length - 1];
    if (last && last.line === line && last.path === this.file) return t;
    return { ...t, steps: joinSteps(t.steps, { path: this.file, line, note }) };
  }

  /** The statements part (taint-statements.ts). */
  protected abstract statements(list: readonly ts.Statement[]): void;
}
