; Ruby: declarations and requires for ctxtui's parser.

(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.module
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method

(call
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @import))
  (#match? @_require "^(require|require_relative|load|autoload)$")) @import.statement
