<?php
// Call sites of a PHP tree with the declarations nikic/PHP-Parser's name resolution binds them
// to: the independent reference of `ctxfast eval fidelity` for PHP.
//
// usage: php php_calls.php ROOT [PHP_PARSER_AUTOLOAD]   (one JSON object per line on stdout)
// PHP-Parser (Debian `php-parser`) parses every .php file of the tree (not vendor/, not tests)
// and its NameResolver qualifies every class and function name by the file's namespace and
// `use` imports. A call is then bound the way PHP binds it where the code names the callee:
// `f()` to the namespaced function, else the global one; `new C` to the class; `C::m()`,
// `self::`/`static::`/`parent::m()` and `$this->m()` to the method of that class, its traits
// or its ancestors. A call on any other value (`$x->m()`) needs the value's type, which the
// code does not state: it is written as unresolved and not scored. A callee outside the tree
// (a built-in function, a vendor class) is resolved with no in-tree target. Declarations are
// reported at their first line, like the graph's definitions.

$root = realpath($argv[1]);
require $argv[2] ?? '/usr/share/php/PhpParser/autoload.php';

use PhpParser\Node;
use PhpParser\NodeTraverser;
use PhpParser\NodeVisitor\NameResolver;
use PhpParser\NodeVisitorAbstract;
use PhpParser\ParserFactory;

const SKIP_DIRS = ['vendor', 'node_modules', 'test', 'tests', 'Tests', 'spec', 'fixtures'];

function php_files(string $dir, array &$out): void
{
    $names = scandir($dir);
    sort($names, SORT_STRING);
    foreach ($names as $name) {
        if ($name[0] === '.' || in_array($name, SKIP_DIRS, true)) {
            continue;
        }
        $path = "$dir/$name";
        if (is_link($path)) {
            continue;
        }
        if (is_dir($path)) {
            php_files($path, $out);
        } elseif (str_ends_with($name, '.php') && !preg_match('/Test\.php$/', $name)) {
            $out[] = $path;
        }
    }
}

$files = [];
php_files($root, $files);
$parser = (new ParserFactory())->create(ParserFactory::PREFER_PHP7);
$asts = [];
foreach ($files as $path) {
    $rel = substr($path, strlen($root) + 1);
    try {
        $stmts = $parser->parse(file_get_contents($path));
    } catch (PhpParser\Error $e) {
        continue; // a file PHP itself cannot parse has no calls to score
    }
    $t = new NodeTraverser();
    $t->addVisitor(new NameResolver());
    $asts[$rel] = $t->traverse($stmts ?? []);
}

/** Lower-cased names: PHP's class, function and method names are case-insensitive. */
function key_of(?string $name): string
{
    return strtolower(ltrim((string) $name, '\\'));
}

// Pass 1: every class-like (its parents, traits and methods) and every function.
$classes = [];
$functions = [];
class Collect extends NodeVisitorAbstract
{
    public string $file = '';

    public function enterNode(Node $n)
    {
        global $classes, $functions;
        if ($n instanceof Node\Stmt\ClassLike && $n->name !== null) {
            $parents = [];
            if ($n instanceof Node\Stmt\Class_ && $n->extends !== null) {
                $parents[] = key_of($n->extends->toString());
            }
            $traits = [];
            $methods = [];
            foreach ($n->stmts as $s) {
                if ($s instanceof Node\Stmt\TraitUse) {
                    foreach ($s->traits as $tr) {
                        $traits[] = key_of($tr->toString());
                    }
                } elseif ($s instanceof Node\Stmt\ClassMethod) {
                    $methods[strtolower($s->name->toString())] = [$s->getStartLine(), $s->stmts === null];
                }
            }
            $classes[key_of($n->namespacedName->toString())] = [
                'name' => $n->name->toString(), 'file' => $this->file, 'line' => $n->getStartLine(),
                'parents' => $parents, 'traits' => $traits, 'methods' => $methods,
            ];
        } elseif ($n instanceof Node\Stmt\Function_) {
            $functions[key_of($n->namespacedName->toString())] = [
                'file' => $this->file, 'line' => $n->getStartLine(),
            ];
        }
        return null;
    }
}
$collect = new Collect();
foreach ($asts as $rel => $stmts) {
    $collect->file = $rel;
    $t = new NodeTraverser();
    $t->addVisitor($collect);
    $t->traverse($stmts);
}

/**
 * The declaration of method `$m` seen from class `$c` (its own, its traits', its ancestors'),
 * or null when some class on the way is not in the tree or the method is not found. A body
 * is what runs: an abstract declaration (an interface's, a trait's `abstract function`) is
 * the answer only when no class on the way implements the method.
 */
function find_method(string $c, string $m): ?array
{
    return find_declared($c, $m, true, []) ?? find_declared($c, $m, false, []);
}

function find_declared(string $c, string $m, bool $bodied, array $seen): ?array
{
    global $classes;
    if (!isset($classes[$c]) || isset($seen[$c])) {
        return null;
    }
    $seen[$c] = true;
    $cls = $classes[$c];
    if (isset($cls['methods'][$m]) && !($bodied && $cls['methods'][$m][1])) {
        return ['file' => $cls['file'], 'line' => $cls['methods'][$m][0], 'callable' => true];
    }
    foreach (array_merge($cls['traits'], $cls['parents']) as $up) {
        $found = find_declared($up, $m, $bodied, $seen);
        if ($found !== null) {
            return $found;
        }
    }
    return null;
}

// Pass 2: every call site, bound where the code names its callee.
class Calls extends NodeVisitorAbstract
{
    public string $file = '';
    /** @var list<?string> the enclosing class-likes (null: an anonymous class) */
    public array $stack = [];

    public function enterNode(Node $n)
    {
        if ($n instanceof Node\Stmt\ClassLike) {
            $this->stack[] = $n->name === null ? null : key_of($n->namespacedName->toString());
        } elseif ($n instanceof Node\Expr\New_ && $n->class instanceof Node\Name) {
            global $classes;
            $c = $this->class_named($n->class);
            $named = $c !== null && isset($classes[$c]) ? $classes[$c]['name'] : $n->class->getLast();
            $this->site($n->class, $named, $c === null ? null : $this->class_target($c));
        } elseif ($n instanceof Node\Expr\FuncCall && $n->name instanceof Node\Name) {
            $this->site($n->name, $n->name->getLast(), $this->function_target($n->name));
        } elseif ($n instanceof Node\Expr\StaticCall && $n->class instanceof Node\Name
            && $n->name instanceof Node\Identifier) {
            $c = $this->class_named($n->class);
            $this->site($n->name, $n->name->toString(), $c === null ? null : $this->method_target($c, $n->name));
        } elseif (($n instanceof Node\Expr\MethodCall || $n instanceof Node\Expr\NullsafeMethodCall)
            && $n->name instanceof Node\Identifier) {
            $on_this = $n->var instanceof Node\Expr\Variable && $n->var->name === 'this';
            $c = $on_this ? end($this->stack) : null;
            $this->site($n->name, $n->name->toString(), $c ? $this->method_target($c, $n->name) : null);
        }
        return null;
    }

    public function leaveNode(Node $n)
    {
        if ($n instanceof Node\Stmt\ClassLike) {
            array_pop($this->stack);
        }
        return null;
    }

    /** The class a name stands for: `self`/`static` the enclosing one, `parent` its parent. */
    private function class_named(Node\Name $name): ?string
    {
        global $classes;
        $special = strtolower($name->toString());
        $here = $this->stack ? end($this->stack) : null;
        if ($special === 'self' || $special === 'static') {
            return $here ?: null;
        }
        if ($special === 'parent') {
            return $here && isset($classes[$here]) ? ($classes[$here]['parents'][0] ?? null) : null;
        }
        return key_of($name->toString());
    }

    /** `new C`: the class (in the tree) or nothing in the tree (a vendor or built-in class). */
    private function class_target(string $c): array
    {
        global $classes;
        return isset($classes[$c])
            ? [['file' => $classes[$c]['file'], 'line' => $classes[$c]['line'], 'callable' => true]]
            : [];
    }

    private function method_target(string $c, Node\Identifier $m): ?array
    {
        global $classes;
        if (!isset($classes[$c])) {
            return []; // a class outside the tree: resolved, nothing in the tree
        }
        $found = find_method($c, strtolower($m->toString()));
        return $found === null ? null : [$found];
    }

    /** `f()`: the namespaced function if the tree has it, else the global one. */
    private function function_target(Node\Name $name): array
    {
        global $functions;
        $ns = $name->getAttribute('namespacedName');
        foreach ([$ns?->toString(), $name->toString()] as $cand) {
            if ($cand !== null && isset($functions[key_of($cand)])) {
                $f = $functions[key_of($cand)];
                return [['file' => $f['file'], 'line' => $f['line'], 'callable' => true]];
            }
        }
        return [];
    }

    private function site(Node $at, string $name, ?array $targets): void
    {
        echo json_encode([
            'file' => $this->file, 'line' => $at->getStartLine(), 'name' => $name,
            'targets' => $targets ?? [], 'resolved' => $targets !== null,
        ], JSON_UNESCAPED_SLASHES | JSON_INVALID_UTF8_SUBSTITUTE), "\n";
    }
}
$calls = new Calls();
foreach ($asts as $rel => $stmts) {
    $calls->file = $rel;
    $calls->stack = [];
    $t = new NodeTraverser();
    $t->addVisitor($calls);
    $t->traverse($stmts);
}
