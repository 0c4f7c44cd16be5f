B
stop_logitJC¹á>ö@I?