# Call sites of a Ruby tree with the methods Ruby's own method lookup binds them to where the
# code names the receiver: the independent reference of `ctxfast eval fidelity` for Ruby.
#
# usage: ruby ruby_calls.rb ROOT   (one JSON object per line on stdout)
# Ripper (Ruby's own parser, in its standard library) parses every .rb file of the tree (not
# vendor/, not tests or specs). Every `module`/`class` body is read with its lexical nesting,
# so constants resolve as Ruby resolves them (the innermost enclosing module first, then
# outwards, then the top level), and a method is looked up as Ruby looks it up: prepended
# modules, the class (every body reopening it), included modules (the last included first),
# then the superclass, and for a singleton call the `def self.` / `class << self` methods,
# the `extend`ed modules and the superclass's singleton methods. Bound are implicit-receiver
# and `self.` calls (on the enclosing class, or for a top-level method), calls on a constant
# (`Foo::Bar.m`) and `Foo.new` (the class). A call on any other value needs its type, which
# the code does not state: it is written as unresolved and not scored, and so is a call no
# in-tree method answers (a Kernel method, `method_missing`, an attribute accessor).
require "json"
require "ripper"

ROOT = File.realpath(ARGV[0])
SKIP_DIRS = %w[vendor node_modules test tests spec fixtures].freeze

def ruby_files(dir, out)
  Dir.children(dir).sort.each do |name|
    next if name.start_with?(".") || SKIP_DIRS.include?(name)
    path = File.join(dir, name)
    next if File.symlink?(path)
    if File.directory?(path)
      ruby_files(path, out)
    elsif name.end_with?(".rb") && !name.end_with?("_test.rb", "_spec.rb")
      out << path
    end
  end
end

# One module or class, merged over every body that opens it.
Mod = Struct.new(:full, :name, :decls, :imethods, :smethods, :supers, :includes, :prepends, :extends)

MODS = {} # "A::B" => Mod
TOP_METHODS = {} # name => [[file, line]]

def mod(full)
  MODS[full] ||= Mod.new(full, full.split("::").last, [], {}, {}, [], [], [], [])
end

# "A::B" of a const_ref / const_path_ref / top_const_ref / var_ref node, or nil.
def const_path(node)
  return nil unless node.is_a?(Array)
  case node[0]
  when :const_ref, :var_ref, :top_const_ref
    node[1].is_a?(Array) && node[1][0] == :@const ? node[1][1] : nil
  when :const_path_ref
    head = const_path(node[1])
    head && "#{head}::#{node[2][1]}"
  when :@const
    node[1]
  end
end

def pos_of(node)
  return nil unless node.is_a?(Array)
  return node[2] if node[0].is_a?(Symbol) && node[0].to_s.start_with?("@")
  node.each do |c|
    p = pos_of(c)
    return p if p
  end
  nil
end

# The full name constant `path` stands for inside `nesting` (innermost first), or nil.
def resolve_const(path, nesting)
  return nil unless path
  nesting.map { |n| "#{n}::#{path}" }.push(path).find { |c| MODS.key?(c) }
end

def args_consts(args)
  out = []
  walk = lambda do |n|
    next unless n.is_a?(Array)
    c = const_path(n)
    if c && %i[var_ref const_path_ref top_const_ref].include?(n[0])
      out << c
    else
      n.each { |x| walk.call(x) }
    end
  end
  walk.call(args)
  out
end

# Pass 1: modules, classes and their methods, with what each mixes in.
def collect(node, file, nesting, singleton)
  return unless node.is_a?(Array)
  case node[0]
  when :module, :class
    name = const_path(node[1])
    full = nesting.empty? ? name : "#{nesting.first}::#{name}"
    m = mod(full)
    m.decls << [file, pos_of(node[1])[0]]
    m.supers << [const_path(node[2]), nesting.dup] if node[0] == :class && node[2]
    body = node[0] == :class ? node[3] : node[2]
    collect(body, file, [full] + nesting, false)
    return
  when :sclass
    collect(node[2], file, nesting, true)
    return
  when :def
    name, line = node[1][1], node[1][2][0]
    if nesting.empty?
      (TOP_METHODS[name] ||= []) << [file, line]
    else
      ((singleton ? mod(nesting.first).smethods : mod(nesting.first).imethods)[name] ||= []) << [file, line]
    end
    return # methods defined inside a method are rare and dynamic
  when :defs
    name, line = node[3][1], node[3][2][0]
    recv = node[1]
    if recv[0] == :var_ref && recv[1][1] == "self" && !nesting.empty?
      (mod(nesting.first).smethods[name] ||= []) << [file, line]
    end
    return
  when :command
    if !nesting.empty? && node[1][0] == :@ident
      kind = { "include" => :includes, "prepend" => :prepends, "extend" => :extends }[node[1][1]]
      if kind
        consts = args_consts(node[2])
        self_ext = kind == :extends && node[2].to_s.include?('[:@kw, "self"')
        mod(nesting.first)[kind] << [consts, nesting.dup, self_ext]
      end
    end
  end
  node.each { |c| collect(c, file, nesting, singleton) }
end

def mixins(m, kind)
  m[kind].reverse.flat_map do |consts, nesting, self_ext|
    found = consts.reverse.map { |c| resolve_const(c, nesting) }.compact
    found << m.full if self_ext
    found
  end
end

def superclass(m)
  m.supers.each do |path, nesting|
    s = resolve_const(path, nesting)
    return s if s
  end
  nil
end

# Where method `name` of instances of `full` is defined (Ruby's ancestor order), or nil.
def instance_method(full, name, seen = {})
  return nil if full.nil? || seen[full]
  seen[full] = true
  m = MODS[full] or return nil
  (mixins(m, :prepends) + [:self] + mixins(m, :includes) + [superclass(m)]).each do |a|
    found = a == :self ? m.imethods[name] : instance_method(a, name, seen)
    return found if found
  end
  nil
end

def singleton_method_of(full, name, seen = {})
  return nil if full.nil? || seen[full]
  seen[full] = true
  m = MODS[full] or return nil
  return m.smethods[name] if m.smethods[name]
  mixins(m, :extends).each do |e|
    found = instance_method(e, name)
    return found if found
  end
  singleton_method_of(superclass(m), name, seen)
end

# The declaration `Foo.new` reaches: the body defining `initialize`, else the one at the
# conventional path (`Foo::BarBaz` in `foo/bar_baz.rb`), else the first.
def class_decl(full)
  m = MODS[full]
  init = m.imethods["initialize"]
  return m.decls.find { |f, _| f == init[0][0] } || m.decls.first if init
  path = full.split("::").map { |s| s.gsub(/([a-z\d])([A-Z])/, '\1_\2').downcase }.join("/") + ".rb"
  m.decls.find { |f, _| f.end_with?(path) } || m.decls.first
end

def emit(file, pos, name, targets)
  puts JSON.generate(
    file: file.scrub, line: pos[0], name: name.scrub,
    targets: (targets || []).map { |f, l| { file: f.scrub, line: l, callable: true } },
    resolved: !targets.nil?
  )
end

# Pass 2: every call site. `singleton`: the code runs with the class itself as `self` (a
# class body, a `def self.` method); `sclass`: inside `class << self`, where `def` makes one.
def calls(node, file, nesting, singleton, sclass = false)
  return unless node.is_a?(Array)
  case node[0]
  when :module, :class
    name = const_path(node[1])
    full = nesting.empty? ? name : "#{nesting.first}::#{name}"
    calls(node[2], file, nesting, singleton, sclass) if node[0] == :class
    calls(node[0] == :class ? node[3] : node[2], file, [full] + nesting, true)
    return
  when :sclass
    calls(node[2], file, nesting, true, true)
    return
  when :def
    calls(node[2..], file, nesting, sclass, sclass)
    return
  when :defs
    calls(node[4..], file, nesting, true)
    return
  when :fcall, :vcall
    implicit(node[1], file, nesting, singleton)
  when :command
    implicit(node[1], file, nesting, singleton) if node[1][0] == :@ident
  when :call, :command_call
    meth = node[3]
    on_receiver(node[1], meth, file, nesting, singleton) if meth.is_a?(Array) && meth[0] == :@ident
  end
  node.each { |c| calls(c, file, nesting, singleton, sclass) }
end

def implicit(ident, file, nesting, singleton)
  name = ident[1]
  here = nesting.first
  found = if here.nil? then nil
          elsif singleton then singleton_method_of(here, name)
          else instance_method(here, name)
          end
  emit(file, ident[2], name, found || TOP_METHODS[name])
end

def on_receiver(recv, meth, file, nesting, singleton)
  name = meth[1]
  if recv.is_a?(Array) && recv[0] == :var_ref && recv[1][0] == :@kw && recv[1][1] == "self"
    return implicit(meth, file, nesting, singleton)
  end
  const = resolve_const(const_path(recv), nesting) if recv.is_a?(Array) &&
                                                      %i[var_ref const_path_ref top_const_ref].include?(recv[0])
  if const.nil?
    emit(file, meth[2], name, nil)
  elsif name == "new"
    emit(file, meth[2], MODS[const].name, [class_decl(const)])
  else
    emit(file, meth[2], name, singleton_method_of(const, name))
  end
end

files = []
ruby_files(ROOT, files)
trees = files.to_h { |p| [p.delete_prefix("#{ROOT}/"), Ripper.sexp(File.read(p, mode: "rb:UTF-8"))] }
trees.each { |rel, sexp| collect(sexp, rel, [], false) }
trees.each { |rel, sexp| calls(sexp, rel, [], false) }
