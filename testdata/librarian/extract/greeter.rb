require "json"

module Greeting
  class Greeter
    def initialize(name)
      @name = name
    end

    def greet
      "hello #{@name}"
    end
  end
end

def top_level_helper
  1
end
