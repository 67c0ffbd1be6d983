// ---- statements ----
// Statements in order: `if` branches on copies joined (a branch that always leaves is dropped),
// `switch` cases joined, loop bodies twice for loop-carried taint, `try`/`catch` joined; and a
// generic walk for nodes no rule concerns, so sinks inside them are still seen.
import ts from 'typescript';
import { lastName, pathOf } from './aliases.ts';
import { isLiteral, skipOuter } from './ast.ts';
import { TaintFunctions } from './taint-functions.ts';
import { ALL, asValue, isFunctionNode, type Vars } from './taint-values.ts';

/** Loops nested up to this deep run their bodies twice; deeper ones run them once. */
const MAX_LOOP_DEPTH = 2;
/** Validators that throw rather than return a verdict, so a bare call statement vouches for its arguments. */
const THROWING_VALIDATOR = /^(validateOrReject|assert\w*)$/;

export abstract class TaintStatements extends TaintFunctions {
  protected override statements(list: readonly ts.Statement[]): void {
    for (const s of list) this.stmt(s);
  }

  protected stmt(node: ts.Statement): void {
    switch (node.kind) {
      case ts.SyntaxKind.Block:
        this.statements((node as ts.Block).statements);
        return;
      case ts.SyntaxKind.VariableStatement:
        this.declarations((node as ts.VariableStatement).declarationList);
        return;
      case ts.SyntaxKind.ExpressionStatement: {
        const e = (node as ts.ExpressionStatement).expression;
        this.expr(e);
        // `await validateOrReject(dto);`: a validation whose result is dropped throws on bad input.
        let c = skipOuter(e);
        if (ts.isAwaitExpression(c)) c = skipOuter(c.expression);
        if (ts.isCallExpression(c) && THROWING_VALIDATOR.test(lastName(c.expression, this.aliases) ?? '')) this.applyClears(this.guard(c).whenTrue);
        return;
      }
      case ts.SyntaxKind.IfStatement:
        this.ifStatement(node as ts.IfStatement);
        return;
      case ts.SyntaxKind.ReturnStatement: {
        const e = (node as ts.ReturnStatement).expression;
        if (e) this.noteReturn(this.expr(e), node, e);
        return;
      }
      case ts.SyntaxKind.ThrowStatement: {
        const e = (node as ts.ThrowStatement).expression;
        if (e) this.expr(e);
        return;
      }
      case ts.SyntaxKind.ForStatement: {
        const f = node as ts.ForStatement;
        if (f.initializer) {
          if (ts.isVariableDeclarationList(f.initializer)) this.declarations(f.initializer);
          else this.expr(f.initializer);
        }
        this.loop(() => {
          if (f.condition) this.expr(f.condition);
          this.stmt(f.statement);
          if (f.incrementor) this.expr(f.incrementor);
        });
        return;
      }
      case ts.SyntaxKind.ForOfStatement:
      case ts.SyntaxKind.ForInStatement: {
        const f = node as ts.ForOfStatement | ts.ForInStatement;
        const t = asValue(this.expr(f.expression));
        this.loop(() => {
          if (ts.isVariableDeclarationList(f.initializer)) {
            for (const d of f.initializer.declarations) this.bind(d.name, t, undefined);
          } else this.assign(f.initializer, t);
          this.stmt(f.statement);
        });
        return;
      }
      case ts.SyntaxKind.WhileStatement:
      case ts.SyntaxKind.DoStatement: {
        const w = node as ts.WhileStatement | ts.DoStatement;
        this.loop(() => {
          this.expr(w.expression);
          this.stmt(w.statement);
        });
        return;
      }
      case ts.SyntaxKind.SwitchStatement:
        this.switchStatement(node as ts.SwitchStatement);
        return;
      case ts.SyntaxKind.TryStatement:
        this.tryStatement(node as ts.TryStatement);
        return;
      case ts.SyntaxKind.LabeledStatement:
        this.stmt((node as ts.LabeledStatement).statement);
        return;
      case ts.SyntaxKind.FunctionDeclaration:
        this.functionLiteral(node as ts.FunctionDeclaration);
        return;
      case ts.SyntaxKind.ClassDeclaration:
        this.classLike(node as ts.ClassDeclaration);
        return;
      case ts.SyntaxKind.ExportAssignment:
        this.expr((node as ts.ExportAssignment).expression);
        return;
      case ts.SyntaxKind.ModuleDeclaration: {
        const body = (node as ts.ModuleDeclaration).body;
        if (body && ts.isModuleBlock(body)) this.statements(body.statements);
        return;
      }
      case ts.SyntaxKind.ImportDeclaration:
      case ts.SyntaxKind.ImportEqualsDeclaration:
      case ts.SyntaxKind.ExportDeclaration:
      case ts.SyntaxKind.InterfaceDeclaration:
      case ts.SyntaxKind.TypeAliasDeclaration:
      case ts.SyntaxKind.EnumDeclaration:
      case ts.SyntaxKind.EmptyStatement:
      case ts.SyntaxKind.BreakStatement:
      case ts.SyntaxKind.ContinueStatement:
      case ts.SyntaxKind.DebuggerStatement:
        return;
      default:
        this.generic(node);
    }
  }

  protected declarations(list: ts.VariableDeclarationList): void {
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const d of list.declarations) {
      this.visitor?.(d, this.fn);
      if (!d.initializer) {
        this.bind(d.name, undefined, undefined);
        continue;
      }
      let t = isFunctionNode(d.initializer) ? (this.functionLiteral(d.initializer), undefined) : this.expr(d.initializer);
      if (t && ts.isIdentifier(d.name)) t = this.hop(t, d, `${d.name.text} = …`);
      this.bind(d.name, t, t ? undefined : pathOf(d.initializer, this.aliases));
      if (isConst && ts.isIdentifier(d.name) && !t) {
        const lead = this.leading(d.initializer);
        if (lead?.complete) this.consts.set(d.name.text, lead.text);
      }
    }
  }

  protected loop(body: () => void): void {
    if (this.loopDepth >= MAX_LOOP_DEPTH) {
      body();
      return;
    }
    this.loopDepth++;
    const before = this.snapshot();
    body();
    this.vars = this.join([before, this.vars]);
    // Second pass: what the first left tainted reaches the top of the body again.
    body();
    this.vars = this.join([before, this.vars]);
    this.loopDepth--;
  }

  protected ifStatement(node: ts.IfStatement): void {
    this.expr(node.expression);
    const guard = this.guard(node.expression);
    const before = this.snapshot();
    this.applyClears(guard.whenTrue);
    this.stmt(node.thenStatement);
    const afterThen = this.vars;
    this.vars = before;
    this.applyClears(guard.whenFalse);
    if (node.elseStatement) this.stmt(node.elseStatement);
    const thenEnds = terminates(node.thenStatement);
    const elseEnds = node.elseStatement !== undefined && terminates(node.elseStatement);
    if (thenEnds && !elseEnds) return; // continue with the else state
    if (elseEnds && !thenEnds) this.vars = afterThen;
    else this.vars = this.join([afterThen, this.vars]);
  }

  protected switchStatement(node: ts.SwitchStatement): void {
    this.expr(node.expression);
    const subject = skipOuter(node.expression);
    const before = this.snapshot();
    const outs: Vars[] = [];
    let hasDefault = false;
    for (const clause of node.caseBlock.clauses) {
      this.vars = new Map(before);
      if (ts.isCaseClause(clause)) {
        this.expr(clause.expression);
        // In `case 'a':` the subject is that constant.
        if (ts.isIdentifier(subject) && isLiteral(clause.expression)) this.applyClears([{ name: subject.text, mask: ALL }]);
      } else hasDefault = true;
      this.statements(clause.statements);
      outs.push(this.vars);
    }
    if (!hasDefault) outs.push(before);
    this.vars = this.join(outs);
  }

  protected tryStatement(node: ts.TryStatement): void {
    const before = this.snapshot();
    this.statements(node.tryBlock.statements);
    if (node.catchClause) {
      const afterTry = this.vars;
      this.vars = this.join([before, afterTry]);
      const decl = node.catchClause.variableDeclaration;
      if (decl) this.bind(decl.name, undefined, undefined);
      this.statements(node.catchClause.block.statements);
      this.vars = this.join([afterTry, this.vars]);
    }
    if (node.finallyBlock) this.statements(node.finallyBlock.statements);
  }

  /** Walks nodes this engine has no rule for, so sinks inside them are still seen. */
  protected generic(node: ts.Node): void {
    ts.forEachChild(node, (child) => {
      if (isFunctionNode(child) || ts.isFunctionDeclaration(child) || ts.isMethodDeclaration(child)) this.functionLiteral(child);
      else if (ts.isClassLike(child)) this.classLike(child);
      else if (ts.isStatement(child)) this.stmt(child);
      else if (ts.isExpression(child)) this.expr(child);
      else this.generic(child);
    });
  }
}

function terminates(s: ts.Statement): boolean {
  switch (s.kind) {
    case ts.SyntaxKind.ReturnStatement:
    case ts.SyntaxKind.ThrowStatement:
    case ts.SyntaxKind.ContinueStatement:
    case ts.SyntaxKind.BreakStatement:
      return true;
    case ts.SyntaxKind.Block:
      return (s as ts.Block).statements.some(terminates);
    case ts.SyntaxKind.IfStatement: {
      const i = s as ts.IfStatement;
      return i.elseStatement !== undefined && terminates(i.thenStatement) && terminates(i.elseStatement);
    }
    default:
      return false;
  }
}
