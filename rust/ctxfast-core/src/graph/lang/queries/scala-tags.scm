; The tags query of the Scala grammar, copied from the `tree-sitter-scala` crate 0.26.9
; (queries/tags.scm; https://github.com/tree-sitter/tree-sitter-scala), whose bindings do
; not export it. MIT licence: Copyright (c) 2018 Max Brunsfeld and GitHub. One pattern is
; left out: the package clause as a definition (`package shop` is a file's header, as
; Java's `package` is: with it, every file held a one-line class named after its package).
; Read by the generic tier (graph/lang/tags.rs), which adds the patterns it lacks there.

; Definitions

(trait_definition
  name: (identifier) @name) @definition.interface

(enum_definition
  name: (identifier) @name) @definition.enum

(simple_enum_case
  name: (identifier) @name) @definition.class

(full_enum_case
  name: (identifier) @name) @definition.class

(class_definition
  name: (identifier) @name) @definition.class

(object_definition
  name: (identifier) @name) @definition.object

(function_definition
  name: (identifier) @name) @definition.function

(val_definition
  pattern: (identifier) @name) @definition.variable

(given_definition
  name: (identifier) @name) @definition.variable

(var_definition
  pattern: (identifier) @name) @definition.variable

(val_declaration
  name: (identifier) @name) @definition.variable

(var_declaration
  name: (identifier) @name) @definition.variable

(type_definition
  name: (type_identifier) @name) @definition.type

(class_parameter
  name: (identifier) @name) @definition.property

; References 

(call_expression
  (identifier) @name) @reference.call

(instance_expression
  (type_identifier) @name) @reference.interface

(instance_expression
  (generic_type
    (type_identifier) @name)) @reference.interface

(extends_clause
  (type_identifier) @name) @reference.class

(extends_clause
  (generic_type
    (type_identifier) @name)) @reference.class

