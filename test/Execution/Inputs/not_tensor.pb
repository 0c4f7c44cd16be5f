
ÿgarbage