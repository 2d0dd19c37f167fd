; A tags query for Kotlin, written for ctxfast's generic tier (graph/lang/tags.rs) against
; the node types of the `tree-sitter-kotlin-ng` grammar 1.1.0, which ships no query. Modelled
; on Aider's kotlin-tags.scm (written for another Kotlin grammar), with GitHub's tags
; conventions: `@definition.<kind>` around a declaration and `@name` on its name,
; `@reference.<kind>` around a use. A declaration's kind is taken from the first pattern
; that tags its name, so `interface` comes before `class`.

; Definitions

(class_declaration
  "interface"
  name: (identifier) @name) @definition.interface

(class_declaration
  name: (identifier) @name) @definition.class

(object_declaration
  name: (identifier) @name) @definition.object

(companion_object
  name: (identifier) @name) @definition.object

(function_declaration
  name: (identifier) @name) @definition.function

(type_alias
  type: (identifier) @name) @definition.type

; Properties: the graph keeps those of a class or a file (a function's are locals).
(property_declaration
  (variable_declaration
    (identifier) @name)) @definition.property

(property_declaration
  (multi_variable_declaration
    (variable_declaration
      (identifier) @name))) @definition.property

; `class Cart(val owner: String)`: a constructor parameter that declares a property.
(class_parameter
  ["val" "var"]
  (identifier) @name) @definition.property

(enum_entry
  (identifier) @name) @definition.constant

; References

; `price(x)`, `Pricing()`: the callee is the call's first child.
(call_expression
  .
  (identifier) @name) @reference.call

; `p.round(x)`, `a?.b?.call()`, `Cart.empty()`: the member is the navigation's last child.
(call_expression
  .
  (navigation_expression
    (identifier) @name .)) @reference.call

; Supertypes: `: Base()`, `: Priced`, `: kotlin.Comparable<A>`, `: B by c` (the type's last
; segment, before its type arguments).
(delegation_specifier
  [
    (user_type (identifier) @name .)
    (user_type (identifier) @name . (type_arguments))
    (constructor_invocation (user_type (identifier) @name .))
    (constructor_invocation (user_type (identifier) @name . (type_arguments)))
    (explicit_delegation (user_type (identifier) @name .))
    (explicit_delegation (user_type (identifier) @name . (type_arguments)))
  ]) @reference.class
