//! `McpManager`: many servers under one roof. (Being built.)
