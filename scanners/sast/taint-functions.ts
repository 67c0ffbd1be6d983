// ---- functions and classes ----
// Entering a function: a new variable table over the enclosing ones, parameters bound (seeded
// when they are sources, clean otherwise), the body walked; and the members of classes.
import ts from 'typescript';
import { functionName } from './ast.ts';
import { TaintFrameworks } from './taint-frameworks.ts';
import { isFunctionNode, union, type FunctionNode, type Taint } from './taint-values.ts';

export abstract class TaintFunctions extends TaintFrameworks {
  protected override enter(node: FunctionNode, name: string, params?: (p: ts.NodeArray<ts.ParameterDeclaration>) => void): void {
    if (!node.body) return;
    this.visitor?.(node, this.fn);
    this.outer.push({ vars: this.vars, consts: this.consts });
    const savedFn = this.fn;
    const savedLoop = this.loopDepth;
    this.vars = new Map();
    this.consts = new Map();
    this.fn = savedFn === '<module>' ? name : `${savedFn} > ${name}`;
    this.loopDepth = 0;
    try {
      if (this.visitor) for (const p of node.parameters) this.visitor(p, this.fn);
      // Parameter decorators (`@Query('id', ParseIntPipe)`): plain calls, for the pattern rules.
      for (const p of node.parameters) for (const d of (ts.canHaveDecorators(p) ? ts.getDecorators(p) : undefined) ?? []) this.expr(d.expression);
      // Parameters shadow outer names: clean unless seeded (route handlers, element callbacks).
      if (params) params(node.parameters);
      else for (const p of node.parameters) this.bindParam(p, undefined);
      if (ts.isBlock(node.body)) this.statements(node.body.statements);
      else this.noteReturn(this.expr(node.body), node.body, node.body);
    } finally {
      const restored = this.outer.pop()!;
      this.vars = restored.vars;
      this.consts = restored.consts;
      this.fn = savedFn;
      this.loopDepth = savedLoop;
    }
  }

  protected override bindParam(p: ts.ParameterDeclaration, t: Taint | undefined): void {
    const init = p.initializer ? this.expr(p.initializer) : undefined;
    this.bind(p.name, union(t, init), undefined);
  }

  protected functionLiteral(node: FunctionNode): void {
    const label = functionName(node, this.sf, this.aliases);
    const seeded = this.callbackSeeds.get(node) ?? this.paramSourceTaints(node);
    if (seeded) this.enter(node, label, (params) => params.forEach((p, j) => this.bindParam(p, seeded[j])));
    else if (this.handlerShaped(node)) this.enterHandler(node, label);
    else this.enter(node, label);
  }

  protected classLike(node: ts.ClassLikeDeclaration): void {
    for (const d of ts.getDecorators(node) ?? []) this.expr(d.expression);
    for (const h of node.heritageClauses ?? []) for (const t of h.types) this.expr(t.expression);
    for (const m of node.members) {
      if (ts.canHaveDecorators(m)) for (const d of ts.getDecorators(m) ?? []) this.expr(d.expression);
      if (m.name && ts.isComputedPropertyName(m.name)) this.expr(m.name.expression);
      if (ts.isPropertyDeclaration(m)) {
        this.visitor?.(m, this.fn);
        if (m.initializer) {
          if (isFunctionNode(m.initializer)) this.functionLiteral(m.initializer);
          else this.expr(m.initializer);
        }
      } else if (ts.isMethodDeclaration(m) || ts.isConstructorDeclaration(m) || ts.isGetAccessor(m) || ts.isSetAccessor(m)) {
        this.functionLiteral(m);
      } else if (ts.isClassStaticBlockDeclaration(m)) {
        this.statements(m.body.statements);
      }
    }
  }
}
