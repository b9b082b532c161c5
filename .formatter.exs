[
  inputs: ["{mix,.formatter}.exs", "{lib,test,bench,examples}/**/*.{ex,exs}"],
  line_length: 120
]
