// Call sites of a Java tree with the methods javac attributes them to: the independent
// reference of `ctxfast eval fidelity` for Java.
//
// usage: java JavaCalls.java ROOT   (one JSON object per line on stdout)
//
// Every non-test .java file under ROOT is parsed and attributed by javac in one task (no
// class path: calls into libraries stay unresolved and score nothing). Each method call and
// `new C(...)` is written with the declaration javac binds it to, reported at the line of the
// declaration's name when that declaration is in the tree.
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;
import javax.lang.model.element.*;
import javax.tools.*;

public class JavaCalls {
    static Path root;
    static PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out)));

    static String rel(CompilationUnitTree cu) {
        Path p = Paths.get(cu.getSourceFile().toUri()).toAbsolutePath().normalize();
        return p.startsWith(root) ? root.relativize(p).toString().replace(File.separatorChar, '/') : null;
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws IOException {
        root = Paths.get(args[0]).toAbsolutePath().normalize();
        List<File> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> !root.relativize(p).toString().matches("(.*/)?(test|tests)/.*"))
                    .filter(p -> !root.relativize(p).toString().startsWith("."))
                    .sorted().map(Path::toFile).collect(Collectors.toList());
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null);
        DiagnosticListener<JavaFileObject> quiet = d -> {};
        JavacTask task = (JavacTask) javac.getTask(null, fm, quiet,
                List.of("-proc:none", "-implicit:none", "-Xlint:none", "-nowarn"), null,
                fm.getJavaFileObjectsFromFiles(files));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        for (CompilationUnitTree cu : units) {
            String file = rel(cu);
            if (file == null) continue;
            LineMap lines = cu.getLineMap();
            SourcePositions sp = trees.getSourcePositions();
            String text = cu.getSourceFile().getCharContent(true).toString();
            new TreePathScanner<Void, Void>() {
                void site(Tree callee, String name, long pos) {
                    // Calls javac synthesises (a default constructor's `super()`) are not in the text.
                    if (pos < 0 || !text.startsWith(name, (int) pos)) return;
                    TreePath path = new TreePath(getCurrentPath(), callee);
                    Element el = trees.getElement(path);
                    if (el == null && getCurrentPath().getLeaf() instanceof NewClassTree)
                        el = trees.getElement(getCurrentPath());
                    boolean resolved = el != null && !(el.asType() != null && el.asType().getKind().name().equals("ERROR"));
                    String targets = "";
                    if (el != null) {
                        TreePath decl = trees.getPath(el);
                        if (decl != null) {
                            String tf = rel(decl.getCompilationUnit());
                            Tree leaf = decl.getLeaf();
                            long start = sp.getStartPosition(decl.getCompilationUnit(), leaf);
                            if (tf != null && start >= 0) {
                                long line = decl.getCompilationUnit().getLineMap().getLineNumber(start);
                                targets = "{\"file\":" + json(tf) + ",\"line\":" + line + ",\"callable\":true}";
                            }
                        }
                    }
                    out.println("{\"file\":" + json(file) + ",\"line\":" + lines.getLineNumber(pos)
                            + ",\"col\":" + (lines.getColumnNumber(pos) - 1) + ",\"name\":" + json(name)
                            + ",\"targets\":[" + targets + "],\"resolved\":" + resolved + "}");
                }

                @Override
                public Void visitMethodInvocation(MethodInvocationTree t, Void v) {
                    ExpressionTree sel = t.getMethodSelect();
                    if (sel instanceof IdentifierTree id) {
                        site(sel, id.getName().toString(), sp.getStartPosition(cu, sel));
                    } else if (sel instanceof MemberSelectTree ms) {
                        // The name's own position (end positions are not kept by javac here):
                        // the first `.name` after the start of the receiver expression.
                        String n = ms.getIdentifier().toString();
                        java.util.regex.Matcher m = java.util.regex.Pattern
                                .compile("\\.\\s*" + java.util.regex.Pattern.quote(n) + "\\b")
                                .matcher(text);
                        long at = sp.getStartPosition(cu, sel);
                        if (at >= 0 && m.find((int) at)) site(sel, n, m.end() - n.length());
                    }
                    return super.visitMethodInvocation(t, v);
                }

                @Override
                public Void visitNewClass(NewClassTree t, Void v) {
                    Tree id = t.getIdentifier();
                    if (id instanceof ParameterizedTypeTree pt) id = pt.getType();
                    String n = id instanceof MemberSelectTree ms ? ms.getIdentifier().toString() : id.toString();
                    long at = sp.getStartPosition(cu, id);
                    // Enum constants are implicit `new`s with no `new` in the text: not calls.
                    if (at >= 0 && text.substring((int) Math.max(0, at - 120), (int) at).matches("(?s).*\\bnew\\s+([\\w.]+\\.)?$"))
                        site(t, n, at);
                    return super.visitNewClass(t, v);
                }
            }.scan(cu, null);
        }
        out.flush();
    }
}
